import type { SVGProps } from 'react'

type IconProps = Omit<SVGProps<SVGSVGElement>, 'children'>

function Icon({ d, ...props }: IconProps & { d: string }) {
  return (
    <svg
      width="16"
      height="16"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      {...props}
    >
      <path d={d} />
    </svg>
  )
}

/** Small line icons (decorative: every control carrying one also has a text name). */
export const icons = {
  plus: (p: IconProps) => <Icon d="M12 5v14M5 12h14" {...p} />,
  search: (p: IconProps) => <Icon d="M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM20 20l-4-4" {...p} />,
  pencil: (p: IconProps) => <Icon d="M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4" {...p} />,
  trash: (p: IconProps) => (
    <Icon
      d="M4 7h16M10 11v6M14 11v6M6 7l1 12a2 2 0 0 0 2 2h6a2 2 0 0 0 2-2l1-12M9 7V4h6v3"
      {...p}
    />
  ),
  gear: (p: IconProps) => (
    <Icon
      d="M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-1.8-.3 1.7 1.7 0 0 0-1 1.5V21a2 2 0 1 1-4 0v-.1a1.7 1.7 0 0 0-1.1-1.5 1.7 1.7 0 0 0-1.8.3l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1a1.7 1.7 0 0 0 .3-1.8 1.7 1.7 0 0 0-1.5-1H3a2 2 0 1 1 0-4h.1a1.7 1.7 0 0 0 1.5-1.1 1.7 1.7 0 0 0-.3-1.8l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1a1.7 1.7 0 0 0 1.8.3H9a1.7 1.7 0 0 0 1-1.5V3a2 2 0 1 1 4 0v.1a1.7 1.7 0 0 0 1 1.5 1.7 1.7 0 0 0 1.8-.3l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0-.3 1.8V9a1.7 1.7 0 0 0 1.5 1H21a2 2 0 1 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1z"
      {...p}
    />
  ),
  spark: (p: IconProps) => (
    <Icon d="M12 3v18M3 12h18M5.6 5.6l12.8 12.8M18.4 5.6 5.6 18.4" strokeWidth={2.2} {...p} />
  ),
  send: (p: IconProps) => <Icon d="M12 19V5M6 11l6-6 6 6" {...p} />,
  stop: (p: IconProps) => (
    <svg width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false" {...p}>
      <rect x="6" y="6" width="12" height="12" rx="2" fill="currentColor" />
    </svg>
  ),
  folder: (p: IconProps) => (
    <Icon d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V7z" {...p} />
  ),
  alert: (p: IconProps) => (
    <Icon
      d="M12 9v4M12 17h.01M10.3 3.9 2 18a2 2 0 0 0 1.7 3h16.6a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0z"
      {...p}
    />
  ),
  info: (p: IconProps) => (
    <Icon d="M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM12 16v-4M12 8h.01" {...p} />
  ),
  check: (p: IconProps) => <Icon d="M5 12l5 5L20 7" {...p} />,
  close: (p: IconProps) => <Icon d="M6 6l12 12M18 6 6 18" {...p} />,
  memory: (p: IconProps) => <Icon d="M6 3h9l4 4v14H6zM14 3v5h5M9 13h6M9 17h6" {...p} />,
  history: (p: IconProps) => <Icon d="M3 12a9 9 0 1 0 3-6.7L3 8M3 3v5h5M12 7v5l3 2" {...p} />,
  key: (p: IconProps) => (
    <Icon
      d="M7.5 19a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zM10.7 11.3 19 3M16 6l3 3M14 8l2 2"
      {...p}
    />
  ),
}

/** Cairn's mark: three stacked stones. */
export function CairnMark({ size = 20 }: { readonly size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <ellipse cx="12" cy="19.5" rx="9" ry="3.3" fill="var(--accent)" />
      <ellipse cx="12" cy="12.6" rx="6.4" ry="2.9" fill="var(--accent)" opacity="0.8" />
      <ellipse cx="12" cy="6.4" rx="3.9" ry="2.5" fill="var(--accent)" opacity="0.6" />
    </svg>
  )
}
