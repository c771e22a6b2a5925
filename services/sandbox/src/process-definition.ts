// A process's definition: what is checked before it is stored, and the environment it starts
// with (the template's variables, its own, then its secrets resolved for the caller).
import { create, fromBinary } from "@bufbuild/protobuf";
import { secretVersionPattern } from "@aiem/kit/aip";
import { ConnectError, failedPrecondition, invalidArguments, quote } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { type Process, ProcessSchema } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { SandboxEngineSchema } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { sandboxPath } from "./access.js";
import type { SandboxRow } from "./store.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DEFAULT_WORKING_DIRECTORY = "/workspace";

/** Where a revealed value goes, for the catalogue's audit record of the reveal. */
export interface SecretReveal {
  /** `workspaces/{workspace}/sandboxEngines/{id}` */
  readonly sandboxEngine: string;
  readonly target: SecretVersionRevealed_Target;
  /** The file's path or the environment variable's name. */
  readonly destination: string;
  /** The process, for an environment variable. */
  readonly process?: string;
}

/**
 * Resolves a secret version's value for a caller allowed to reveal it, its owner or an
 * administrator (the catalogue's, in-process or over its internal API), which records the reveal.
 */
export interface SecretResolver {
  resolveSecretValue(
    principal: Principal,
    secretVersionName: string,
    reveal: SecretReveal,
  ): Promise<{ readonly name: string; readonly value: Uint8Array }>;
}

/** A process definition checked (every problem at once) and normalised: the working directory resolved. */
export function validateProcessDefinition(definition: Process): Process {
  const problems: { field: string; description: string }[] = [];
  if (definition.command === "") problems.push({ field: "process.command", description: "is required" });
  let workingDirectory = DEFAULT_WORKING_DIRECTORY;
  if (definition.workingDirectory !== "") {
    try {
      workingDirectory = sandboxPath("process.working_directory", definition.workingDirectory);
    } catch (err) {
      problems.push({
        field: "process.working_directory",
        description: ConnectError.from(err).rawMessage.replace(/^process\.working_directory: /, ""),
      });
    }
  }
  for (const key of Object.keys(definition.environmentVariables)) {
    if (!ENV_NAME.test(key)) {
      problems.push({
        field: `process.environment_variables[${quote(key)}]`,
        description: "must be a variable name: letters, digits and underscores, not starting with a digit",
      });
    }
  }
  for (const [key, ref] of Object.entries(definition.secretEnvironmentVariables)) {
    const field = `process.secret_environment_variables[${quote(key)}]`;
    if (!ENV_NAME.test(key)) {
      problems.push({
        field,
        description: "must be a variable name: letters, digits and underscores, not starting with a digit",
      });
    }
    if (!ref?.secretVersion) problems.push({ field: `${field}.secret_version`, description: "is required" });
    else if (!secretVersionPattern.matches(ref.secretVersion)) {
      problems.push({
        field: `${field}.secret_version`,
        description: `${quote(ref.secretVersion)} is not a name of the form workspaces/{workspace}/secrets/{secret}/versions/{version}`,
      });
    }
  }
  if (problems.length > 0) throw invalidArguments(problems);
  return create(ProcessSchema, {
    command: definition.command,
    args: definition.args,
    workingDirectory,
    environmentVariables: definition.environmentVariables,
    secretEnvironmentVariables: Object.fromEntries(
      Object.entries(definition.secretEnvironmentVariables).map(([k, v]) => [k, { secretVersion: v.secretVersion }]),
    ),
  });
}

/** The complete environment of a process: the template's variables, its own, then its secrets. */
export async function processEnvironment(
  secrets: SecretResolver | undefined,
  principal: Principal,
  sandbox: SandboxRow,
  definition: Process,
): Promise<Record<string, string>> {
  const template =
    fromBinary(SandboxEngineSchema, sandbox.resource).sandboxEngineTemplateInfo?.environmentalVariables ?? {};
  const environment: Record<string, string> = { ...template, ...definition.environmentVariables };
  const refs = Object.entries(definition.secretEnvironmentVariables);
  if (refs.length > 0 && !secrets) {
    throw failedPrecondition(
      "secret environment variables need the secure store, which this sandbox service cannot reach: it resolves secrets when the catalogue runs in the same process, or at AIEM_CATALOGUE_URL with AIEM_INTERNAL_KEY",
    );
  }
  for (const [variable, ref] of refs) {
    const reveal: SecretReveal = {
      sandboxEngine: sandbox.name,
      target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
      destination: variable,
      process: definition.name,
    };
    const resolved = await secrets!.resolveSecretValue(principal, ref.secretVersion, reveal).catch((err: unknown) => {
      const e = ConnectError.from(err);
      // The catalogue names its own field; here the reference is part of the process.
      throw new ConnectError(
        e.rawMessage.replace(
          /^secret_version: /,
          `process.secret_environment_variables[${quote(variable)}].secret_version: `,
        ),
        e.code,
      );
    });
    environment[variable] = secretText(ref.secretVersion, resolved.value);
  }
  return environment;
}

/** Text a secret value must be to become an environment variable; the value never reaches a message. */
function secretText(name: string, value: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(value);
  } catch {
    throw failedPrecondition(`the value of ${name} is not UTF-8 text, so it cannot be an environment variable`);
  }
  if (text.includes("\0"))
    throw failedPrecondition(`the value of ${name} contains a NUL byte, so it cannot be an environment variable`);
  return text;
}
