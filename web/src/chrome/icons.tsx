// Inline SVG icons: a few hundred bytes each and no icon font to download.
import type { ReactElement } from "react";

const svg = (path: ReactElement, size = 20) => (
  <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
    {path}
  </svg>
);

export const SearchIcon = () =>
  svg(
    <path
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      d="M10.5 18a7.5 7.5 0 1 1 0-15 7.5 7.5 0 0 1 0 15zm5.3-2.2L21 21"
    />,
    18,
  );

export const SunIcon = () =>
  svg(
    <g fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round">
      <circle cx="12" cy="12" r="4.5" />
      <path d="M12 1.5v2.2M12 20.3v2.2M4.6 4.6l1.5 1.5M17.9 17.9l1.5 1.5M1.5 12h2.2M20.3 12h2.2M4.6 19.4l1.5-1.5M17.9 6.1l1.5-1.5" />
    </g>,
  );

export const MoonIcon = () =>
  svg(<path fill="currentColor" d="M20.7 14.6A8.9 8.9 0 0 1 9.4 3.3a9 9 0 1 0 11.3 11.3z" />);

export const MenuIcon = () =>
  svg(<path fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" d="M3 6h18M3 12h18M3 18h18" />, 24);

export const CloseIcon = ({ size = 20 }: { size?: number }) =>
  svg(<path fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" d="M6 6l12 12M18 6L6 18" />, size);

export const ChevronIcon = () =>
  svg(
    <path
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      d="M9 6l6 6-6 6"
    />,
    16,
  );

export const ExternalIcon = () =>
  svg(
    <path
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      d="M14 4h6v6M20 4l-9 9M18 14v5a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V7a1 1 0 0 1 1-1h5"
    />,
    12,
  );

export const Logo = () => (
  <svg width="28" height="28" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
    <rect x="2" y="2" width="28" height="28" rx="7" fill="var(--brand)" />
    <path d="M9 22V10h4.2l2.8 6.2 2.8-6.2H23v12h-3.2v-6.8L17.2 21h-2.4l-2.6-5.8V22z" fill="var(--brand-contrast)" />
  </svg>
);
