// Settings of the site chrome: storage keys, the announcement, and the links to sibling product
// documentation and to the company pages. A deployment changes the links here.

/**
 * Browser storage keys. The theme key is shared with sibling docs on the same origin so the
 * reader's choice follows them; the others are namespaced to this site.
 */
export const storageKeys = {
  theme: "theme",
  announcementDismissed: "ai-engine-manager.announcement.dismiss",
  announcementId: "ai-engine-manager.announcement.id",
  docsVersion: "docs-preferred-version-ai-engine-manager",
  tryItToken: "ai-engine-manager.try-it.token",
  reloadedRoute: "ai-engine-manager.reloaded-route",
} as const;

/** Changing the id shows the bar again to readers who dismissed an earlier announcement. */
export const announcementId = "sandbox-engines-1.3.0";

export interface ExternalLink {
  label: string;
  href: string;
}

export interface NavDropdown {
  label: string;
  items: ExternalLink[];
}

export const siblingDocs: NavDropdown[] = [
  {
    label: "AI engines",
    items: [
      { label: "Driverless AI", href: "https://docs.h2o.ai/driverless-ai/latest-stable/docs/userguide/index.html" },
      { label: "H2O-3", href: "https://docs.h2o.ai/h2o/latest-stable/h2o-docs/index.html" },
      { label: "Sparkling Water", href: "https://docs.h2o.ai/sparkling-water/3.3/latest-stable/doc/index.html" },
    ],
  },
  {
    label: "Python APIs",
    items: [
      { label: "Driverless AI Python client", href: "https://docs.h2o.ai/driverless-ai/pyclient/docs/html/index.html" },
      { label: "H2O-3 Python module", href: "https://docs.h2o.ai/h2o/latest-stable/h2o-py/docs/index.html" },
    ],
  },
];

export const learnMore: ExternalLink = { label: "Learn More", href: "https://h2o.ai/platform/" };
export const requestDemo: ExternalLink = { label: "Request a Demo", href: "https://h2o.ai/demo/" };

export const footerGroups: { title: string; links: ExternalLink[] }[] = [
  {
    title: "About us",
    links: [
      { label: "Company", href: "https://h2o.ai/company/" },
      { label: "Careers", href: "https://h2o.ai/company/careers/" },
      { label: "Contact", href: "https://h2o.ai/company/contact/" },
    ],
  },
  {
    title: "Legal",
    links: [
      { label: "Privacy policy", href: "https://h2o.ai/legal/privacy/" },
      { label: "End user license agreement", href: "https://h2o.ai/legal/eula/" },
    ],
  },
  {
    title: "Community",
    links: [
      { label: "GitHub", href: "https://github.com/h2oai" },
      { label: "Stack Overflow", href: "https://stackoverflow.com/questions/tagged/h2o" },
      { label: "Community Slack", href: "https://h2o.ai/slack/" },
    ],
  },
];
