import { describe, expect, it } from "vitest";
import { tocTree } from "./toc.js";

describe("the table of contents", () => {
  it("nests h3 under the h2 before it", () => {
    const tree = tocTree([
      { id: "a", text: "A", level: 2 },
      { id: "a1", text: "A1", level: 3 },
      { id: "b", text: "B", level: 2 },
    ]);
    expect(tree.map((n) => [n.item.id, n.children.map((c) => c.id)])).toEqual([
      ["a", ["a1"]],
      ["b", []],
    ]);
  });

  it("keeps a leading h3 as its own entry", () => {
    expect(tocTree([{ id: "x", text: "X", level: 3 }]).map((n) => n.item.id)).toEqual(["x"]);
  });
});
