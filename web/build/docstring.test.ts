import { describe, expect, it } from "vitest";
import { docstringHtml, inlineHtml, summaryOf } from "./docstring.js";

const link = (name: string) => (name === "login" ? "/x/py/clients/login#login" : undefined);

describe("docstrings", () => {
  it("turn reST roles and literals into code, linking names that are documented", () => {
    expect(inlineHtml("Call :func:`login` with ``token`` or `x`.", link)).toBe(
      'Call <a href="/x/py/clients/login#login"><code>login</code></a> with <code>token</code> or <code>x</code>.',
    );
    expect(inlineHtml(":class:`~pkg.mod.Thing` <b>", link)).toBe("<code>Thing</code> &lt;b&gt;");
  });

  it("render Google-style sections", () => {
    const html = docstringHtml(
      "Creates an engine.\n\nArgs:\n    name (str): The name.\n        Second line.\n    cpu: Cores.\n\nReturns:\n    Engine: the engine.\n\nRaises:\n    ValueError: bad input.\n\nExample:\n    >>> create('x')\n",
      link,
    );
    expect(html).toContain("<p>Creates an engine.</p>");
    expect(html).toContain(
      '<dt><code>name</code> <span class="doc-type">(str)</span></dt><dd><p>The name. Second line.</p></dd>',
    );
    expect(html).toContain("<dt><code>cpu</code></dt><dd><p>Cores.</p></dd>");
    expect(html).toContain('<p><span class="doc-type">Engine</span>: the engine.</p>');
    expect(html).toContain("<dt><code>ValueError</code></dt><dd><p>bad input.</p></dd>");
    expect(html).toContain(
      '<code class="language-python">&gt;&gt;&gt; <span class="tok-function">create</span>(<span class="tok-string">&#39;x&#39;</span>)</code>',
    );
  });

  it("render literal blocks after ::", () => {
    const html = docstringHtml("Use it like this::\n\n    engine.wait()\n\nDone.", link);
    expect(html).toContain("<p>Use it like this:</p>");
    expect(html).toContain('<span class="tok-function">wait</span>()');
    expect(html).toContain("<p>Done.</p>");
  });

  it("summarise with the first paragraph as plain text", () => {
    expect(summaryOf("Signs in with ``token``\nand :func:`login`.\n\nMore.")).toBe("Signs in with token and login.");
    expect(summaryOf(null)).toBe("");
  });
});
