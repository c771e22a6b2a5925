// Node loads its whole fetch implementation (undici, ~20 ms of CPU) the first time anything
// touches the global `Headers`, and Connect does on the first request. That cost would sit on
// every sandbox's start-to-ready path, so the agent installs this small Headers of its own,
// which covers the Fetch standard's Headers class as Connect uses it: case-insensitive names,
// values of repeated names joined by ", ", iteration sorted by name.

type Init = Iterable<readonly [string, string]> | Record<string, string> | MinimalHeaders;

class MinimalHeaders {
  readonly #values = new Map<string, string[]>();

  constructor(init?: Init) {
    if (init === undefined || init === null) return;
    if (init instanceof MinimalHeaders) {
      init.forEach((value, name) => this.append(name, value));
    } else if (typeof (init as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of init as Iterable<readonly [string, string]>) {
        if (pair.length !== 2) throw new TypeError("header pairs must have exactly two elements");
        this.append(pair[0], pair[1]);
      }
    } else {
      // As the standard says: a record's values are strings (an array becomes "a,b").
      for (const [name, value] of Object.entries(init as Record<string, unknown>)) this.append(name, String(value));
    }
  }

  append(name: string, value: string): void {
    const key = String(name).toLowerCase();
    const list = this.#values.get(key);
    const v = String(value).trim();
    if (list) list.push(v);
    else this.#values.set(key, [v]);
  }

  set(name: string, value: string): void {
    this.#values.set(String(name).toLowerCase(), [String(value).trim()]);
  }

  delete(name: string): void {
    this.#values.delete(String(name).toLowerCase());
  }

  get(name: string): string | null {
    const list = this.#values.get(String(name).toLowerCase());
    return list ? list.join(", ") : null;
  }

  has(name: string): boolean {
    return this.#values.has(String(name).toLowerCase());
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  forEach(callback: (value: string, name: string, parent: MinimalHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const list = this.#values.get(name)!;
      if (name === "set-cookie") for (const v of list) yield [name, v];
      else yield [name, list.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

/** Replaces the global Headers before anything has loaded Node's own. */
export function installMinimalHeaders(): void {
  Object.defineProperty(globalThis, "Headers", {
    value: MinimalHeaders,
    writable: true,
    configurable: true,
    enumerable: false,
  });
}

export { MinimalHeaders };
