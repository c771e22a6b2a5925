// The two ways a runtime tolerates what another replica (or a person) already did: an object that
// exists is read instead of made, and one already gone counts as deleted.
import { ApiException, type KubernetesObject } from "@kubernetes/client-node";
import type { Owner } from "./owner.js";

/** Creates an object; when it exists already, reads it instead (or returns undefined). */
export async function createOrRead<T>(create: () => Promise<T>, read?: () => Promise<T>): Promise<T | undefined> {
  try {
    return await create();
  } catch (error) {
    if (error instanceof ApiException && error.code === 409) return read?.();
    throw error;
  }
}

/** Creates the object the others hang from, or reads it when it exists, and returns it as their owner. */
export async function createOwner(
  kind: string,
  name: string,
  create: () => Promise<KubernetesObject>,
  read: () => Promise<KubernetesObject>,
): Promise<Owner> {
  const owned = await createOrRead(create, read);
  return { kind, name, uid: owned?.metadata?.uid ?? "" };
}

export async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
}
