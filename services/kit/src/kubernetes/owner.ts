// Who made our objects, and the owner references that let one object's deletion take the rest.

/** Who made an object; the real service's operator writes this value, and tools select on it. */
export const managedBy = "engine-operator";

/** What an owner reference needs of the object that owns the rest. */
export interface Owner {
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** An owner reference to `owner`, which blocks the owner's foreground deletion until the dependent is gone. */
export function ownerReferencesOf(owner: Owner | undefined) {
  return owner
    ? [{ apiVersion: "v1", kind: owner.kind, name: owner.name, uid: owner.uid, blockOwnerDeletion: true }]
    : undefined;
}
