// Run as another account by may-read-acl.test: for each path given, what `mayNotRead` says and
// what the kernel says of a real read (its error code, or 'read'), one JSON line.
import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { mayNotRead } from '../../src/main/lib/may-read'

const answers = process.argv.slice(2).map((at) => {
  const stats = lstatSync(at)
  let kernel = 'read'
  try {
    if (stats.isDirectory()) readdirSync(at)
    else readFileSync(at)
  } catch (error) {
    kernel = (error as NodeJS.ErrnoException).code ?? 'failed'
  }
  return { mayNotRead: mayNotRead(stats, at), kernel }
})
console.log(JSON.stringify(answers))
