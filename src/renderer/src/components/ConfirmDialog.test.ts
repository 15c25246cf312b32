import type { ComponentProps } from 'react'
import { describe, expect, it } from 'vitest'
import type { ConfirmDialog } from './ConfirmDialog'

type Props = ComponentProps<typeof ConfirmDialog>

// The type is what is under test: `npm run typecheck` fails where a `@ts-expect-error` below is
// no longer an error (as it was not before stop 28, when a confirm label came without its
// action and drew a button that did nothing).
describe('ConfirmDialog’s props', () => {
  it('take a confirm button only with its action, and an action only with its button', () => {
    const base = { title: 'Delete a.md?', children: null, onCancel: () => undefined }
    const tells: Props = base
    const asks: Props = { ...base, confirmLabel: 'Delete', onConfirm: () => undefined }
    // @ts-expect-error: a confirm button that would do nothing
    const buttonOnly: Props = { ...base, confirmLabel: 'Delete' }
    // @ts-expect-error: an action no button runs
    const actionOnly: Props = { ...base, onConfirm: () => undefined }
    expect([tells, asks, buttonOnly, actionOnly].map((props) => props.confirmLabel)).toEqual([
      undefined,
      'Delete',
      'Delete',
      undefined,
    ])
  })
})
