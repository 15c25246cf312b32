/**
 * Plugs the handler into the SDK's tool runner. The runner turns a thrown `ToolError` into a
 * tool_result whose content is exactly the error's content (is_error: true), but any other throw
 * into `Error: <message>` — which would double the `Error:` our messages already carry.
 */

import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory'
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError'
import type {
  BetaMemoryTool20250818Command,
  BetaToolResultContentBlockParam,
} from '@anthropic-ai/sdk/resources/beta'
import { wellFormed } from '../lib/text'
import type { MemoryResult } from './types'

/**
 * Runs one memory command for Claude; `toolUseId` links the result (and any commit) to
 * Claude's call. Its content goes to the API as is, image blocks included.
 */
export type MemoryExecutor = (input: unknown, toolUseId: string | null) => Promise<MemoryResult>

/**
 * The SDK runnable memory tool (`betaMemoryTool`) backed by `execute`. Its `run` passes the
 * tool_use id through and throws `ToolError(content)` on failure, so Claude receives exactly
 * `content` with `is_error: true`.
 */
export function createRunnableMemoryTool(
  execute: MemoryExecutor,
): BetaRunnableTool<BetaMemoryTool20250818Command> {
  const call = async (input: unknown, toolUseId: string | null) => {
    const result = await execute(input, toolUseId)
    const content = toSdkContent(result.content)
    if (result.isError) throw new ToolError(content)
    return content
  }
  const handler = (input: BetaMemoryTool20250818Command) => call(input, null)
  const handlers: MemoryToolHandlers = {
    view: handler,
    create: handler,
    str_replace: handler,
    insert: handler,
    delete: handler,
    rename: handler,
  }
  const tool = betaMemoryTool(handlers)
  return {
    ...tool,
    // Claude's input is untrusted: hand it over as sent; the handler validates every field.
    parse: (content: unknown) => content as BetaMemoryTool20250818Command,
    run: (args, context) => call(args, context?.toolUse.id ?? null),
  }
}

// Made well-formed here too, whatever executor produced it: the SDK sends this to the API
// within the turn, where one lone surrogate gets the whole request refused.
function toSdkContent(
  content: MemoryResult['content'],
): string | Array<BetaToolResultContentBlockParam> {
  if (typeof content === 'string') return wellFormed(content)
  return content.map((block): BetaToolResultContentBlockParam =>
    block.type === 'text'
      ? { type: 'text', text: wellFormed(block.text) }
      : { type: 'image', source: { ...block.source } },
  )
}
