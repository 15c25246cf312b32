import { revealHidden } from '../lib/reveal-hidden'
import './revealed.css'

/**
 * A line with its invisible characters marked (a bidi override as a marked `U+202E`), so the
 * person sees the text as Claude reads it, not as the characters would make it look. Each mark
 * holds the characters it stands for (`data-raw`), so a copy can give them back (`file-lines.ts`).
 */
export function Revealed({ text }: { readonly text: string }) {
  const pieces = revealHidden(text)
  if (pieces.length === 1 && pieces[0]!.kind === 'text') return text
  return pieces.map((piece, i) =>
    piece.kind === 'text' ? (
      <span key={i}>{piece.text}</span>
    ) : (
      <mark key={i} className="hidden-char" title="An invisible character" data-raw={piece.raw}>
        {piece.label}
      </mark>
    ),
  )
}
