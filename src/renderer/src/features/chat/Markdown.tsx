import { memo, type MouseEvent, type ReactNode } from 'react'
import ReactMarkdown, { type Components } from 'react-markdown'
import rehypeHighlight from 'rehype-highlight'
import remarkGfm from 'remark-gfm'
import { api } from '../../lib/api'
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
  table: ({ children }) => (
    <div className="md-table-wrap">
      <table>{children}</table>
    </div>
  ),
}

/**
 * Claude's markdown: GFM (tables, task lists), highlighted code, never raw HTML (`skipHtml`,
 * no rehype-raw).
 */
export const Markdown = memo(function Markdown({ text }: { readonly text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        skipHtml
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[[rehypeHighlight, { detect: false }]]}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  )
})
