import { memo, useEffect, useState, type MouseEvent, type ReactNode } from 'react'
import ReactMarkdown, { type Components, type Options } from 'react-markdown'
import remarkGfm from 'remark-gfm'
import { GuardedMarkdown } from '../../components/GuardedMarkdown'
import { api } from '../../lib/api'
import { directionOf } from '../../lib/text-direction'
import { isOpenableUrl } from './links'

function SafeLink({ href, children }: { href?: string; children?: ReactNode }) {
  if (!isOpenableUrl(href)) return <span className="md-link-text">{children}</span>
  const open = (event: MouseEvent<HTMLAnchorElement>) => {
    // The system browser opens it; the app window never navigates away.
    event.preventDefault()
    void api().app.openExternal({ url: href })
  }
  return (
    <a href={href} onClick={open} title={`Open ${href} in your browser`} rel="noreferrer">
      {children}
    </a>
  )
}

const components: Components = {
  a: ({ href, children }) => <SafeLink href={href}>{children}</SafeLink>,
  // Remote images would reach the network from the page: show their description instead.
  img: ({ alt }) => <span className="md-image-alt">{alt ? `[image: ${alt}]` : '[image]'}</span>,
  // Each paragraph and heading takes its direction from its own first letters: a Hebrew or
  // Arabic one reads right to left, its punctuation where its reader looks for it.
  p: ({ children }) => <p dir="auto">{children}</p>,
  h1: ({ children }) => <h1 dir="auto">{children}</h1>,
  h2: ({ children }) => <h2 dir="auto">{children}</h2>,
  h3: ({ children }) => <h3 dir="auto">{children}</h3>,
  h4: ({ children }) => <h4 dir="auto">{children}</h4>,
  h5: ({ children }) => <h5 dir="auto">{children}</h5>,
  h6: ({ children }) => <h6 dir="auto">{children}</h6>,
  // So do list items and table cells (a cell keeps its column's alignment, an item its task-list
  // class).
  li: ({ node: _node, ...props }) => <li dir="auto" {...props} />,
  td: ({ node: _node, ...props }) => <td dir="auto" {...props} />,
  th: ({ node: _node, ...props }) => <th dir="auto" {...props} />,
  // A list, a quote and a table read from their first letter too (its bullets or numbers, its
  // bar, its first column on that side); `dir="auto"` cannot tell, as their items have their own.
  ul: ({ node, ...props }) => <ul dir={blockDirection(node)} {...props} />,
  ol: ({ node, ...props }) => <ol dir={blockDirection(node)} {...props} />,
  blockquote: ({ node, ...props }) => <blockquote dir={blockDirection(node)} {...props} />,
  table: ({ node, children }) => (
    // On its wrapper: a right-to-left table stands at the right, as its text does.
    <div className="md-table-wrap" dir={blockDirection(node)}>
      <table>{children}</table>
    </div>
  ),
}

/** What `blockDirection` reads of markdown's syntax tree: text, and elements holding more. */
interface TreeNode {
  readonly type: string
  readonly value?: string
  readonly children?: ReadonlyArray<TreeNode>
}

/** The direction of a block's first letter, found without joining all its text. */
function blockDirection(node: TreeNode | undefined): 'rtl' | 'ltr' | undefined {
  if (!node) return undefined
  if (node.type === 'text') return directionOf(node.value ?? '')
  for (const child of node.children ?? []) {
    const found = blockDirection(child)
    if (found) return found
  }
  return undefined
}

type Plugins = NonNullable<Options['rehypePlugins']>

// Code highlighting (highlight.js and its grammars) is most of markdown's weight and only
// fenced code needs it: it loads, once, when the first message with a code fence renders.
let highlighting: Plugins | null = null
let loading: Promise<Plugins> | null = null

function loadHighlighting(): Promise<Plugins> {
  loading ??= import('rehype-highlight').then((module) => {
    highlighting = [[module.default, { detect: false }]]
    return highlighting
  })
  return loading
}

/** The highlighting plugins once loaded, for text with a code fence; until then none. */
function useHighlighting(text: string): Plugins | undefined {
  const wanted = text.includes('```') || text.includes('~~~')
  const [plugins, setPlugins] = useState(highlighting)
  useEffect(() => {
    if (!wanted || plugins) return
    let live = true
    loadHighlighting().then(
      (loaded) => {
        if (live) setPlugins(loaded)
      },
      // Without highlighting the code still shows, in plain monospace.
      () => undefined,
    )
    return () => {
      live = false
    }
  }, [wanted, plugins])
  return wanted ? (plugins ?? undefined) : undefined
}

/**
 * Claude's markdown: GFM (tables, task lists), highlighted code, never raw HTML (`skipHtml`,
 * no rehype-raw). A reply that cannot be formatted shows as plain text, never a blank window.
 */
export const Markdown = memo(function Markdown({
  text,
  streaming = false,
}: {
  readonly text: string
  /** More of the reply is still coming: costly text waits to be formatted once, at its end. */
  readonly streaming?: boolean
}) {
  const rehypePlugins = useHighlighting(text)
  return (
    <div className="markdown">
      <GuardedMarkdown text={text} streaming={streaming}>
        <ReactMarkdown
          skipHtml
          remarkPlugins={[remarkGfm]}
          rehypePlugins={rehypePlugins}
          components={components}
        >
          {text}
        </ReactMarkdown>
      </GuardedMarkdown>
    </div>
  )
})
