// The hand-written pages of the site and the sidebar that orders them. The Python client
// reference and the API reference are generated and join the sidebar where marked.
import type { Layout, SidebarItem } from "../src/site-types.js";

export interface GuidePage {
  /** Relative to the base path. */
  route: string;
  /** Markdown file under web/content. */
  file: string;
  layout: Layout;
}

const guide = (route: string, file = `${route}.md`, layout: Layout = "doc"): GuidePage => ({ route, file, layout });

export const guidePages: GuidePage[] = [
  guide("", "home.md", "home"),
  guide("get-started/what-is-ai-engine-manager"),
  guide("get-started/access-ai-engines"),
  guide("user-guide/dai-engine/create"),
  guide("user-guide/dai-engine/manage"),
  guide("user-guide/h2o-engine/create"),
  guide("user-guide/h2o-engine/manage"),
  guide("user-guide/notebook-engine/create"),
  guide("user-guide/notebook-engine/manage"),
  guide("user-guide/sandbox-engine/create"),
  guide("user-guide/sandbox-engine/manage"),
  guide("administration/catalogue"),
  guide("administration/kubernetes"),
  guide("py/installation"),
  guide("py/initialization"),
  guide("py/login"),
  guide("py/migration"),
  guide("py/dai_examples"),
  guide("py/h2o_examples"),
  guide("py/notebook_examples"),
  guide("py/sandbox_examples"),
  guide("release-notes"),
];

export const API_ROUTE = "api/";
/** The events page: streams, subjects and delivery, then the payloads from the protos. */
export const EVENTS_ROUTE = "events/";
export const EVENTS_INTRO_FILE = "events/intro.md";
export const SEARCH_ROUTE = "search";
export const PY_REFERENCE_ROUTE = "py/clients/";
/** The API reference's introduction, rendered above the generated part. */
export const API_INTRO_FILE = "api/intro.md";

const link = (label: string, path: string): SidebarItem => ({ type: "link", label, path });
const category = (label: string, items: SidebarItem[], path?: string): SidebarItem => ({
  type: "category",
  label,
  items,
  ...(path !== undefined ? { path } : {}),
});

/**
 * One sidebar for every documentation page, py/login included: the spec's notes disagree on
 * whether py/login has one, and a shared sidebar keeps every page one click from every other.
 */
export function createSidebar(pythonReference: SidebarItem): SidebarItem[] {
  return [
    category("Get started", [
      link("What is AI Engine Manager?", "get-started/what-is-ai-engine-manager"),
      link("Access AI engines", "get-started/access-ai-engines"),
    ]),
    category("User guide", [
      category("Driverless AI engines", [
        link("Create", "user-guide/dai-engine/create"),
        link("Manage", "user-guide/dai-engine/manage"),
      ]),
      category("H2O engines", [
        link("Create", "user-guide/h2o-engine/create"),
        link("Manage", "user-guide/h2o-engine/manage"),
      ]),
      category("Notebook engines", [
        link("Create", "user-guide/notebook-engine/create"),
        link("Manage", "user-guide/notebook-engine/manage"),
      ]),
      category("Sandbox engines", [
        link("Create", "user-guide/sandbox-engine/create"),
        link("Manage", "user-guide/sandbox-engine/manage"),
      ]),
    ]),
    category("Administration", [
      link("Profiles, versions, images and templates", "administration/catalogue"),
      link("Run on Kubernetes", "administration/kubernetes"),
    ]),
    category("Python client", [
      link("Installation", "py/installation"),
      link("Initialization", "py/initialization"),
      link("Login", "py/login"),
      link("Migration", "py/migration"),
      category("Examples", [
        link("Driverless AI engines", "py/dai_examples"),
        link("H2O engines", "py/h2o_examples"),
        link("Notebook engines", "py/notebook_examples"),
        link("Sandbox engines", "py/sandbox_examples"),
      ]),
      pythonReference,
    ]),
    link("API reference", API_ROUTE),
    link("Events", EVENTS_ROUTE),
    link("Release notes", "release-notes"),
  ];
}
