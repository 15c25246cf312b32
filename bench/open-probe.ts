export {}

/**
 * Opens one data folder in a fresh process and reports, as one JSON line, how long loading the
 * history module and opening took and the process's resident memory after the open — what a
 * start of the app costs. Run by the history benchmark:
 *
 *   node --import tsx bench/open-probe.ts <dataDir>
 */
const dataDir = process.argv[2]
if (!dataDir) throw new Error('usage: open-probe <dataDir>')

const loadStart = performance.now()
const { openVersionedMemory } = await import('../src/main/history')
const loadMs = performance.now() - loadStart
const rssBefore = process.memoryUsage().rss

const start = performance.now()
const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
const openMs = performance.now() - start
// A first timeline page: what the window shows right after opening.
await memory.log({ offset: 0, limit: 50 })
const firstPageMs = performance.now() - start
const rss = process.memoryUsage().rss
const recovery = memory.recovery?.kind ?? null
await memory.close()

process.stdout.write(
  `${JSON.stringify({ loadMs, openMs, firstPageMs, rss, rssBefore, recovery })}\n`,
)
