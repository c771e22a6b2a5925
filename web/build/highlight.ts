// A build-time syntax highlighter for the few languages the docs show. It runs at build time so
// no highlighting code reaches the browser; it only has to be good enough to make code readable.
import { escapeHtml } from "./html.js";

interface Rule {
  kind: string;
  pattern: RegExp;
}

const strings = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/;
const number = /\b\d+(?:\.\d+)?\b/;

const pythonKeywords =
  "and|as|assert|async|await|break|class|continue|def|del|elif|else|except|finally|for|from|global|if|import|in|is|lambda|nonlocal|not|or|pass|raise|return|try|while|with|yield|None|True|False";

const languages: Record<string, Rule[]> = {
  python: [
    { kind: "comment", pattern: /#[^\n]*/ },
    { kind: "string", pattern: /[rbfu]?(?:"""[\s\S]*?"""|'''[\s\S]*?''')/ },
    { kind: "string", pattern: new RegExp(`[rbfu]?(?:${strings.source})`) },
    { kind: "keyword", pattern: new RegExp(`\\b(?:${pythonKeywords})\\b`) },
    { kind: "function", pattern: /\b[A-Za-z_]\w*(?=\()/ },
    { kind: "number", pattern: number },
  ],
  bash: [
    { kind: "comment", pattern: /(?:^|(?<=\s))#[^\n]*/ },
    { kind: "string", pattern: strings },
    { kind: "variable", pattern: /\$\{?[A-Za-z_]\w*\}?|\$\(/ },
    { kind: "keyword", pattern: /\b(?:export|if|then|else|fi|for|do|done|while|in|echo)\b/ },
    { kind: "option", pattern: /(?<=\s)--?[A-Za-z][\w-]*/ },
  ],
  json: [
    { kind: "property", pattern: /"(?:[^"\\\n]|\\.)*"(?=\s*:)/ },
    { kind: "string", pattern: /"(?:[^"\\\n]|\\.)*"/ },
    { kind: "keyword", pattern: /\b(?:true|false|null)\b/ },
    { kind: "number", pattern: /-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/ },
  ],
  yaml: [
    { kind: "comment", pattern: /#[^\n]*/ },
    { kind: "property", pattern: /[\w.-]+(?=:(?:\s|$))/ },
    { kind: "string", pattern: strings },
    { kind: "number", pattern: number },
  ],
  http: [
    { kind: "keyword", pattern: /^(?:GET|POST|PATCH|PUT|DELETE)\b/m },
    { kind: "property", pattern: /^[\w-]+(?=:)/m },
    { kind: "string", pattern: strings },
  ],
};
languages.sh = languages.bash!;
languages.shell = languages.bash!;
languages.console = languages.bash!;
languages.py = languages.python!;
languages.pycon = languages.python!;
languages.yml = languages.yaml!;

/** Returns the code as escaped HTML with <span class="tok-KIND"> around recognised tokens. */
export function highlight(code: string, lang: string): string {
  const rules = languages[lang];
  if (!rules) return escapeHtml(code);
  const combined = new RegExp(rules.map((r) => `(${r.pattern.source})`).join("|"), "gm");
  let out = "";
  let last = 0;
  for (const match of code.matchAll(combined)) {
    const index = match.index;
    if (match[0] === "") {
      combined.lastIndex++;
      continue;
    }
    const group = match.slice(1).findIndex((g) => g !== undefined);
    out += escapeHtml(code.slice(last, index));
    out += `<span class="tok-${rules[group]!.kind}">${escapeHtml(match[0])}</span>`;
    last = index + match[0].length;
  }
  return out + escapeHtml(code.slice(last));
}
