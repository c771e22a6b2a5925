// The footer: the About us, Legal and Community link groups.
import { footerGroups } from "../site-config.js";
import { SITE_VERSION } from "../site-types.js";

export function Footer() {
  return (
    <footer className="footer">
      <div className="footer-groups">
        {footerGroups.map((group) => (
          <div key={group.title} className="footer-group">
            <h2 className="footer-title">{group.title}</h2>
            <ul>
              {group.links.map((link) => (
                <li key={link.href}>
                  <a href={link.href} target="_blank" rel="noopener noreferrer">
                    {link.label}
                    <span className="visually-hidden"> (opens in a new tab)</span>
                  </a>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
      <p className="footer-copyright">AI Engine Manager documentation, version {SITE_VERSION}.</p>
    </footer>
  );
}
