/**
 * Where keyboard focus goes when a banner holding it goes away (dismissed here, or in another
 * window): left alone, it falls to the page's body and a keyboard user loses their place. A
 * banner inside a group (an element marked `data-banner-group`: the chat's notices, a side
 * pane, the full history view) hands it to the banner that followed it, else the one before it,
 * else (none left) to `origin` (the control that produced it, such as the button whose action's
 * result it told) when that is still in the group and can take focus, else to the group's list
 * (an element marked `data-banner-fallback`: its row that is a Tab stop, else its first
 * control), else to the group's screen: its first enabled text field (the chat's message box),
 * else the screen's region itself. Only when focus was inside the banner as it went, and only if
 * nothing took the focus since.
 *
 * Called as the banner unmounts, while it is still in the page; the hand-off waits until the
 * change that removed it is done, so that banners removed together, or added in their place,
 * count as they end up.
 */
export function handOffFocus(banner: HTMLElement, origin?: HTMLElement | null): void {
  const group = banner.closest<HTMLElement>('[data-banner-group]')
  if (!group || !banner.contains(document.activeElement)) return
  const before = bannersIn(group)
  const at = before.indexOf(banner)
  const later = before.slice(at + 1)
  const earlier = before.slice(0, Math.max(at, 0)).reverse()
  queueMicrotask(() => {
    const now = document.activeElement
    // Taken since by the person, or already handed on.
    if (now !== null && now !== document.body && now.isConnected) return
    const left = bannersIn(group)
    const next =
      later.find((b) => left.includes(b)) ?? earlier.find((b) => left.includes(b)) ?? left[0]
    const target = next
      ? controlOf(next)
      : origin && takesFocus(origin, group)
        ? origin
        : (listOf(group) ?? fallbackOf(group))
    target?.focus()
  })
}

/**
 * Where focus goes in `group` (a pane marked `data-banner-group`) when what held it went and no
 * banner is left to take it: the group's list (its current row), else its screen. Null when the
 * group itself is gone.
 */
export function fallbackFocusIn(group: HTMLElement): HTMLElement | null {
  return listOf(group) ?? fallbackOf(group)
}

/** Whether `element` is still in `group`, shown and enabled, so focus can land on it. */
export function takesFocus(element: HTMLElement, group: HTMLElement): boolean {
  return (
    element.isConnected &&
    group.contains(element) &&
    !element.matches(':disabled') &&
    element.closest('[inert]') === null &&
    element.getClientRects().length > 0
  )
}

/** The group's list (`data-banner-fallback`): its Tab stop, else its first control, else itself. */
function listOf(group: HTMLElement): HTMLElement | null {
  if (!group.isConnected) return null
  const list = group.querySelector<HTMLElement>('[data-banner-fallback]')
  if (!list || list.getClientRects().length === 0) return null
  // Its rows' Tab stop (a tree's current row, a grid) before any other control in it.
  const stop =
    list.querySelector<HTMLElement>('[tabindex="0"]') ??
    list.querySelector<HTMLElement>('button:not(:disabled), a[href], input:not(:disabled)')
  if (stop) return stop
  // Focusable from script only: not a stop on the Tab order.
  if (!list.hasAttribute('tabindex')) list.tabIndex = -1
  return list
}

function bannersIn(group: HTMLElement): HTMLElement[] {
  return group.isConnected ? [...group.querySelectorAll<HTMLElement>('.banner')] : []
}

/** A banner's Dismiss button, else its first control that can take focus. */
function controlOf(banner: HTMLElement): HTMLElement | null {
  return (
    banner.querySelector<HTMLElement>('button[aria-label="Dismiss"]:not(:disabled)') ??
    banner.querySelector<HTMLElement>('button:not(:disabled), a[href], [tabindex="0"]') ??
    null
  )
}

/** The group's screen: its first enabled text field, else the screen itself. */
function fallbackOf(group: HTMLElement): HTMLElement | null {
  if (!group.isConnected) return null
  const screen = group.closest<HTMLElement>('main, [role="main"]')
  if (!screen || screen.hidden) return null
  const field = screen.querySelector<HTMLElement>('textarea:not(:disabled), input:not(:disabled)')
  if (field) return field
  // Focusable from script only: not a stop on the Tab order.
  if (!screen.hasAttribute('tabindex')) screen.tabIndex = -1
  return screen
}
