import { describe, expect, it } from "vitest";
import { createMarkdownRenderer, extractRegion, parseFrontmatter } from "./markdown.js";

const files: Record<string, string> = {
  "py/examples/demo.py":
    "import os\n\n# [START create]\n    engine = create()\n    engine.wait()\n# [END create]\nprint('done')\n",
};
const render = createMarkdownRenderer({ base: "/ai-engine-manager/", readInclude: (f) => files[f]! });

describe("markdown pages", () => {
  it("takes the title from front matter and adds it as the h1", () => {
    const page = render("---\ntitle: Create an engine\ndescription: How\n---\n\nIntro.\n", "a.md");
    expect(page.title).toBe("Create an engine");
    expect(page.description).toBe("How");
    expect(page.html).toMatch(/^<h1>Create an engine<\/h1>/);
  });

  it("gives h2 and h3 unique ids with anchors and lists them in the table of contents", () => {
    const page = render("# T\n\n## Pause and resume\n\n### Details\n\n## Pause and resume\n\n#### Deep\n", "a.md");
    expect(page.toc).toEqual([
      { id: "pause-and-resume", text: "Pause and resume", level: 2 },
      { id: "details", text: "Details", level: 3 },
      { id: "pause-and-resume-1", text: "Pause and resume", level: 2 },
    ]);
    expect(page.html).toContain(
      '<h2 id="pause-and-resume">Pause and resume<a class="hash-link" href="#pause-and-resume"',
    );
    expect(page.html).toContain('<h4 id="deep">');
  });

  it("accepts an explicit heading id", () => {
    const page = render("# T\n\n## 1.3.0 {#v1-3-0}\n", "a.md");
    expect(page.toc[0]).toEqual({ id: "v1-3-0", text: "1.3.0", level: 2 });
  });

  it("puts the base path on site links, in Markdown and raw HTML, and records them for the link check", () => {
    const page = render(
      '# T\n\n[Login](/py/login) and [API](/api/#errors) <a class="card" href="/release-notes">notes</a> [here](#t)\n',
      "x.md",
    );
    expect(page.html).toContain('href="/ai-engine-manager/py/login"');
    expect(page.html).toContain('href="/ai-engine-manager/api/#errors"');
    expect(page.html).toContain('href="/ai-engine-manager/release-notes"');
    expect(page.links).toEqual(["x.md#t", "py/login", "api/#errors", "release-notes"]);
  });

  it("opens external links in a new tab and refuses relative links", () => {
    expect(render("# T\n\n[AIP](https://google.aip.dev/160)\n", "a.md").html).toContain(
      'rel="noopener noreferrer" target="_blank"',
    );
    expect(() => render("# T\n\n[x](other-page)\n", "a.md")).toThrow(/links must be absolute/);
  });

  it("highlights code, adds a copy button and includes regions of example files", () => {
    const page = render('# T\n\n```python title="demo" file=py/examples/demo.py#create\n```\n', "a.md");
    expect(page.html).toContain('<div class="code-title">demo</div>');
    expect(page.html).toContain('class="copy-button"');
    expect(page.html).toContain('<span class="tok-function">create</span>()');
    expect(page.html).not.toContain("import os");
    expect(page.html).not.toContain("[START");
  });

  it("renders admonitions and wraps tables so they can scroll", () => {
    const page = render(
      "# T\n\n:::warning Careful\nDeleting removes **data**.\n:::\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
      "a.md",
    );
    expect(page.html).toContain('<div class="admonition admonition-warning">');
    expect(page.html).toContain('<p class="admonition-title">Careful</p>');
    expect(page.html).toContain("<strong>data</strong>");
    expect(page.html).toContain('<div class="table-wrapper" tabindex="0"><table>');
  });

  it("fails without a title", () => {
    expect(() => render("Just text.\n", "a.md")).toThrow(/no title/);
  });
});

describe("helpers", () => {
  it("parses front matter", () => {
    expect(parseFrontmatter('---\ntitle: "Quoted"\n---\nbody').data).toEqual({ title: "Quoted" });
    expect(parseFrontmatter("no front matter").body).toBe("no front matter");
  });

  it("extracts a region, dedented, or the whole file without markers", () => {
    expect(extractRegion(files["py/examples/demo.py"]!, "create")).toBe("engine = create()\nengine.wait()");
    expect(extractRegion(files["py/examples/demo.py"]!, undefined)).not.toContain("[END");
    expect(() => extractRegion("x", "missing")).toThrow(/region missing not found/);
  });
});
