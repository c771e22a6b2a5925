// What the transcoder needs to know about a message type's fields, worked out once per type.
import type { DescField, DescMessage } from "@bufbuild/protobuf";

/** Of one field: its entry in the plan, or undefined to leave it out. */
export type PlanEntry<E> = (field: DescField, planOf: (desc: DescMessage) => readonly E[]) => E | undefined;

/**
 * A function giving a message type's plan: the entries `entry` makes of its fields, computed once
 * per type. An entry may depend on the plan of a nested type; a recursive type counts as having
 * no entries while it is visited, which is right because a cycle alone adds none.
 */
export function createFieldPlan<E>(entry: PlanEntry<E>): (desc: DescMessage) => readonly E[] {
  const cache = new WeakMap<DescMessage, readonly E[]>();
  const planOf = (desc: DescMessage): readonly E[] => {
    const cached = cache.get(desc);
    if (cached) return cached;
    cache.set(desc, []);
    const out: E[] = [];
    for (const field of desc.fields) {
      const e = entry(field, planOf);
      if (e !== undefined) out.push(e);
    }
    cache.set(desc, out);
    return out;
  };
  return planOf;
}
