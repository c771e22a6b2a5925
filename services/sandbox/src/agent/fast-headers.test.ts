import { describe, expect, it } from "vitest";
import { MinimalHeaders } from "./fast-headers.js";

// The agent's Headers must answer like Node's own for everything Connect does with them.
describe("minimal Headers", () => {
  const build = (H: typeof Headers | typeof MinimalHeaders) => {
    const h = new H({ "Content-Type": "application/grpc", "x-multi": ["a", "b"] } as never);
    h.append("X-Multi", "c");
    h.set("grpc-status", "0");
    h.append("te", " trailers ");
    h.delete("content-type");
    return h;
  };

  it("behaves like the platform's Headers", () => {
    const ours = build(MinimalHeaders);
    const node = build(Headers);
    expect([...ours]).toEqual([...node]);
    for (const name of ["x-multi", "X-MULTI", "grpc-status", "te", "content-type", "absent"]) {
      expect([name, ours.get(name), ours.has(name)]).toEqual([name, node.get(name), node.has(name)]);
    }
    const seen: string[] = [];
    ours.forEach((value, name) => seen.push(`${name}=${value}`));
    expect(seen).toEqual(["grpc-status=0", "te=trailers", "x-multi=a,b, c"]);
    expect([...new MinimalHeaders(ours)]).toEqual([...ours]);
    expect([
      ...new MinimalHeaders([
        ["a", "1"],
        ["A", "2"],
      ]),
    ]).toEqual([["a", "1, 2"]]);
    expect([...ours.keys()]).toEqual([...node.keys()]);
    expect([...ours.values()]).toEqual([...node.values()]);
  });
});
