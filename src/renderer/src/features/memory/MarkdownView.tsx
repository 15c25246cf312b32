import ReactMarkdown, { type Components } from 'react-markdown'
import remarkGfm from 'remark-gfm'
import { GuardedMarkdown } from '../../components/GuardedMarkdown'
import { api } from '../../lib/api'

/** Opens https links outside the app; anything else is shown as plain text. */
const components: Components = {
  a({ href, children }) {
    if (!href || !/^https:\/\//i.test(href))
      return <span className="md-link-disabled">{children}</span>
    return (
      <a
        href={href}
        title={href}
        onClick={(event) => {
          event.preventDefault()
          void api().app.openExternal({ url: href })
        }}
      >
        {children}
      </a>
    )
  },
  // Memory files never load anything from the network: images show their alt text.
  img({ alt }) {
    return <span className="md-image-alt">[image: {alt || 'untitled'}]</span>
  },
}

/**
 * A memory file rendered as GitHub-flavoured markdown; raw HTML is never rendered. A file that
 * cannot be formatted shows as plain text.
 */
export function MarkdownView(props: { readonly text: string }) {
  return (
    <div className="md-body">
      <GuardedMarkdown text={props.text}>
        <ReactMarkdown remarkPlugins={[remarkGfm]} components={components} skipHtml>
          {props.text}
        </ReactMarkdown>
      </GuardedMarkdown>
    </div>
  )
}
