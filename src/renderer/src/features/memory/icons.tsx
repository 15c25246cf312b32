/** Small line icons for the memory and history panes (decorative: always aria-hidden). */
const base = {
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
    <svg {...base}>
      <path d="M4 1.75h5.25L12.5 5v9.25H4z" />
      <path d="M9 1.75V5.25h3.5" />
    </svg>
  )
}

export function FolderIcon(props: { readonly open?: boolean }) {
  return (
    <svg {...base}>
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
    <svg {...base}>
      <rect x="2" y="2.5" width="12" height="11" rx="1.5" />
      <circle cx="6" cy="6.5" r="1.25" />
      <path d="M2.5 12l3.5-3.5 2.5 2.5 2-2 3 3" />
    </svg>
  )
}

export function PlusIcon() {
  return (
    <svg {...base}>
      <path d="M8 3v10M3 8h10" />
    </svg>
  )
}

export function UnifiedIcon() {
  return (
    <svg {...base}>
      <rect x="2.5" y="2.5" width="11" height="11" rx="1.5" />
      <path d="M5 6h6M5 8h6M5 10h4" />
    </svg>
  )
}

export function SplitIcon() {
  return (
    <svg {...base}>
      <rect x="2.5" y="2.5" width="11" height="11" rx="1.5" />
      <path d="M8 2.5v11M4.5 6h2M4.5 8.5h2M9.5 6h2M9.5 8.5h2" />
    </svg>
  )
}
