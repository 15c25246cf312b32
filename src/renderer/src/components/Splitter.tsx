import { useRef, type KeyboardEvent, type PointerEvent } from 'react'
import './components.css'

/**
 * A divider between a top and a bottom area (or, `vertical`, a left and a right one): drag
 * it, or focus it and use the arrow keys (Home/End for the limits). `value` is the first
 * area's share of the height (or width), in %.
 */
export function Splitter(props: {
  readonly label: string
  readonly value: number
  readonly onChange: (value: number) => void
  readonly min?: number
  readonly max?: number
  readonly vertical?: boolean
}) {
  const { value, onChange, min = 15, max = 85, vertical = false } = props
  const ref = useRef<HTMLDivElement>(null)
  const clamp = (next: number) => Math.round(Math.max(min, Math.min(max, next)))

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    const container = ref.current?.parentElement
    if (!container) return
    event.preventDefault()
    event.currentTarget.setPointerCapture(event.pointerId)
    const box = container.getBoundingClientRect()
    const move = (moveEvent: globalThis.PointerEvent) =>
      onChange(
        clamp(
          vertical
            ? ((moveEvent.clientX - box.left) / box.width) * 100
            : ((moveEvent.clientY - box.top) / box.height) * 100,
        ),
      )
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
    const keys: Record<string, number> = vertical
      ? { ArrowLeft: value - step, ArrowRight: value + step, Home: min, End: max }
      : { ArrowUp: value - step, ArrowDown: value + step, Home: min, End: max }
    const next = keys[event.key]
    if (next === undefined) return
    event.preventDefault()
    onChange(clamp(next))
  }

  return (
    <div
      ref={ref}
      role="separator"
      aria-orientation={vertical ? 'vertical' : 'horizontal'}
      aria-label={props.label}
      aria-valuenow={value}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      className={vertical ? 'splitter splitter-vertical' : 'splitter'}
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  )
}
