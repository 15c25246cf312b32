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
  arrowDown: (p: IconProps) => <Icon d="M12 5v14M6 13l6 6 6-6" {...p} />,
  arrowLeft: (p: IconProps) => <Icon d="M19 12H5M11 6l-6 6 6 6" {...p} />,
  eye: (p: IconProps) => (
    <Icon
      d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12zM12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z"
      {...p}
    />
  ),
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
  sync: (p: IconProps) => (
    <Icon d="M20 11a8 8 0 0 0-14.6-4.4M4 4v4h4M4 13a8 8 0 0 0 14.6 4.4M20 20v-4h-4" {...p} />
  ),
  cloudOff: (p: IconProps) => (
    <Icon
      d="M3 3l18 18M8 6.3A6 6 0 0 1 17.7 10H18a4 4 0 0 1 2.3 7.3M16 18H7a5 5 0 0 1-1.6-9.7"
      {...p}
    />
  ),
  merge: (p: IconProps) => <Icon d="M7 3v18M7 7c0 6 10 4 10 10v4M17 3v4" {...p} />,
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

/** The compact 14 px set drawn on a 16 px grid, for the memory tree and the diff toolbar. */
const small = {
  width: 14,
  height: 14,
  viewBox: '0 0 16 16',
  fill: 'none',
  stroke: 'currentColor',
  strokeWidth: 1.4,
  strokeLinecap: 'round',
  strokeLinejoin: 'round',
  'aria-hidden': true,
} as const

export function FileIcon() {
  return (
    <svg {...small}>
      <path d="M4 1.75h5.25L12.5 5v9.25H4z" />
      <path d="M9 1.75V5.25h3.5" />
    </svg>
  )
}

export function FolderIcon(props: { readonly open?: boolean }) {
  return (
    <svg {...small}>
      {props.open ? (
        <path d="M1.75 4.25v8.5h10.5l2-5.5H4.25l-2.5 5.5M1.75 4.25V3h4l1.5 1.5h5v2.75" />
      ) : (
        <path d="M1.75 3.25h4l1.5 1.5h7v8h-12.5z" />
      )}
    </svg>
  )
}

export function ImageIcon() {
  return (
    <svg {...small}>
      <rect x="2" y="2.5" width="12" height="11" rx="1.5" />
      <circle cx="6" cy="6.5" r="1.25" />
      <path d="M2.5 12l3.5-3.5 2.5 2.5 2-2 3 3" />
    </svg>
  )
}

export function UnifiedIcon() {
  return (
    <svg {...small}>
      <rect x="2.5" y="2.5" width="11" height="11" rx="1.5" />
      <path d="M5 6h6M5 8h6M5 10h4" />
    </svg>
  )
}

export function SplitIcon() {
  return (
    <svg {...small}>
      <rect x="2.5" y="2.5" width="11" height="11" rx="1.5" />
      <path d="M8 2.5v11M4.5 6h2M4.5 8.5h2M9.5 6h2M9.5 8.5h2" />
    </svg>
  )
}
