import { useRef, type KeyboardEvent, type PointerEvent } from 'react'
import './components.css'

/**
 * A horizontal divider between a top and a bottom area: drag it, or focus it and use the
 * arrow keys (Home/End for the limits). `value` is the top area's share of the height (%).
 */
export function Splitter(props: {
  readonly label: string
  readonly value: number
  readonly onChange: (value: number) => void
  readonly min?: number
  readonly max?: number
}) {
  const { value, onChange, min = 15, max = 85 } = props
  const ref = useRef<HTMLDivElement>(null)
  const clamp = (next: number) => Math.round(Math.max(min, Math.min(max, next)))

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    const container = ref.current?.parentElement
    if (!container) return
    event.preventDefault()
    event.currentTarget.setPointerCapture(event.pointerId)
    const box = container.getBoundingClientRect()
    const move = (moveEvent: globalThis.PointerEvent) =>
      onChange(clamp(((moveEvent.clientY - box.top) / box.height) * 100))
    const target = event.currentTarget
    const up = () => {
      target.removeEventListener('pointermove', move)
      target.removeEventListener('pointerup', up)
    }
    target.addEventListener('pointermove', move)
    target.addEventListener('pointerup', up)
  }

  const onKeyDown = (event: KeyboardEvent) => {
    const step = event.shiftKey ? 10 : 3
    const keys: Record<string, number> = {
      ArrowUp: value - step,
      ArrowDown: value + step,
      Home: min,
      End: max,
    }
    const next = keys[event.key]
    if (next === undefined) return
    event.preventDefault()
    onChange(clamp(next))
  }

  return (
    <div
      ref={ref}
      role="separator"
      aria-orientation="horizontal"
      aria-label={props.label}
      aria-valuenow={value}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      className="splitter"
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  )
}
