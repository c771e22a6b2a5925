// Catches an error thrown while rendering a page: the chrome stays usable and the reader can try
// again without reloading.
import { Component, type ReactNode } from "react";

interface Props {
  children: ReactNode;
  /** Changing it (a new route) clears a previous crash. */
  resetKey: string;
}

interface State {
  error: unknown;
  resetKey: string;
}

function causes(error: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = error; e !== undefined && out.length < 5; e = (e as { cause?: unknown }).cause) {
    out.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    if (!(e instanceof Error)) break;
  }
  return out;
}

export class PageErrorBoundary extends Component<Props, State> {
  override state: State = { error: undefined, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error ?? new Error("Unknown error") };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey !== state.resetKey ? { error: undefined, resetKey: props.resetKey } : null;
  }

  override render(): ReactNode {
    if (this.state.error === undefined) return this.props.children;
    return (
      <div className="page-error" role="alert">
        <h1>This page crashed.</h1>
        <button type="button" className="button button-primary" onClick={() => this.setState({ error: undefined })}>
          Try again
        </button>
        <div className="page-error-text">
          {causes(this.state.error).map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed chain of causes, never reordered
            <p key={i}>{i > 0 ? `Cause: ${c}` : c}</p>
          ))}
        </div>
      </div>
    );
  }
}
