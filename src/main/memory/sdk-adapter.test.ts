import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory'
import {
  runRunnableTool,
  type BetaToolRunContext,
} from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRunnableMemoryTool } from './sdk-adapter'
import { makeSandbox, type Sandbox } from './test-support'
import { TINY_PNG } from '../../../test/fixtures/images'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

const contextFor = (id: string): BetaToolRunContext => {
  const toolUse = {
    type: 'tool_use',
    id,
    name: 'memory',
    input: {},
  } as BetaToolRunContext['toolUse']
  return { toolUse, toolUseBlock: toolUse }
}

describe('createRunnableMemoryTool', () => {
  it('is the SDK memory tool definition', () => {
    const tool = createRunnableMemoryTool((input) => box.tool.execute(input))
    expect(tool).toMatchObject({ type: 'memory_20250818', name: 'memory' })
  })

  it('passes the tool_use id through to the executor', async () => {
    const seen: Array<string | null> = []
    const tool = createRunnableMemoryTool(async (input, id) => {
      seen.push(id)
      return box.tool.execute(input)
    })
    await tool.run({ command: 'view', path: '/memories' }, contextFor('toolu_123'))
    await tool.run({ command: 'view', path: '/memories' })
    expect(seen).toEqual(['toolu_123', null])
  })

  it('returns success content as is', async () => {
    const tool = createRunnableMemoryTool((input) => box.tool.execute(input))
    const content = await tool.run(
      { command: 'create', path: '/memories/a.md', file_text: 'x' },
      contextFor('t1'),
    )
    expect(content).toBe('File created successfully at: /memories/a.md')
  })

  it('throws a ToolError carrying exactly the error content', async () => {
    const tool = createRunnableMemoryTool((input) => box.tool.execute(input))
    const thrown = await Promise.resolve(
      tool.run({ command: 'delete', path: '/memories/none' }, contextFor('t2')),
    ).catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(ToolError)
    expect((thrown as ToolError).content).toBe('Error: The path /memories/none does not exist')
  })

  it('gives the SDK runner the exact tool_result text with is_error, no doubled prefix', async () => {
    const tool = createRunnableMemoryTool((input) => box.tool.execute(input))
    const failed = await runRunnableTool(
      tool,
      { command: 'delete', path: '/memories/none' },
      contextFor('t3'),
    )
    expect(failed).toEqual({
      content: 'Error: The path /memories/none does not exist',
      isError: true,
    })
    const missing = await runRunnableTool(
      tool,
      { command: 'view', path: '/memories/none' },
      contextFor('t4'),
    )
    expect(missing).toEqual({
      content: 'The path /memories/none does not exist. Please provide a valid path.',
      isError: true,
    })
    const junk = await runRunnableTool(tool, { command: 'nope' }, contextFor('t5'))
    expect(junk.isError).toBe(true)
    expect(junk.content).toMatch(/^Error: Unknown command `nope`/)
    const ok = await runRunnableTool(tool, { command: 'view', path: '/memories' }, contextFor('t6'))
    expect(ok.isError).toBe(false)
  })

  it('never hands the API half a surrogate pair, whatever the executor answered (D1)', async () => {
    const tool = createRunnableMemoryTool(async () => ({
      content: 'cut \uD83D',
      isError: true,
      mutation: null,
      errorCode: 'invalid-input',
    }))
    const failed = await runRunnableTool(tool, { command: 'view' }, contextFor('t8'))
    expect(failed).toEqual({ content: 'cut \uFFFD', isError: true })
    const blocks = createRunnableMemoryTool(async () => ({
      content: [{ type: 'text', text: '\uDE00 and 😀' }],
      isError: false,
      mutation: null,
      errorCode: null,
    }))
    const ok = await runRunnableTool(blocks, { command: 'view' }, contextFor('t9'))
    expect(ok.content).toEqual([{ type: 'text', text: '\uFFFD and 😀' }])
  })

  it('passes image blocks through', async () => {
    await box.write('p.png', TINY_PNG)
    const tool = createRunnableMemoryTool((input) => box.tool.execute(input))
    const outcome = await runRunnableTool(
      tool,
      { command: 'view', path: '/memories/p.png' },
      contextFor('t7'),
    )
    expect(outcome.isError).toBe(false)
    expect(outcome.content).toMatchObject([
      { type: 'text' },
      { type: 'image', source: { media_type: 'image/png' } },
    ])
  })

  it('avoids the trap of a plain throw, which the SDK would prefix with a second Error:', async () => {
    const naive = betaMemoryTool({
      view: () => {
        throw new Error('Error: The path /memories/none does not exist')
      },
      create: () => '',
      str_replace: () => '',
      insert: () => '',
      delete: () => '',
      rename: () => '',
    })
    const outcome = await runRunnableTool(
      naive,
      { command: 'view', path: '/memories/none' },
      contextFor('t8'),
    )
    expect(outcome.content).toBe('Error: Error: The path /memories/none does not exist')
  })
})
