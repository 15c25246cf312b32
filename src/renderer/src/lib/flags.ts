/** How review flags read for people, wherever they show (a pending change, the timeline). */
import type { FlagRule, WriteFlag } from '../../../shared/types'
import { displayPath } from './format'

const TITLES: Readonly<Record<FlagRule, string>> = {
  instructions: 'Instruction-like text',
  'hidden-unicode': 'Hidden characters',
  'deletes-folder': 'Deletes a folder',
  'deletes-most': 'Deletes most of a file',
  'person-edited': 'Edited recently, not by Claude',
  unchecked: 'Not checked for your edits',
}

/** The rule that fired, in a few words. */
export function flagTitle(rule: FlagRule): string {
  return TITLES[rule]
}

/** Where it fired: `notes.md, line 3`, or the file alone for whole-file rules. */
export function flagWhere(flag: WriteFlag): string {
  const file = displayPath(flag.path)
  return flag.line === null ? file : `${file}, line ${flag.line}`
}

/** One line per flag: rule, where, and what was found. */
export function flagSentences(flags: ReadonlyArray<WriteFlag>): ReadonlyArray<string> {
  return flags.map((flag) => `${flagTitle(flag.rule)} (${flagWhere(flag)}): ${flag.message}`)
}

/** The rules that fired, each once, in the order they first fired. */
export function flagRules(flags: ReadonlyArray<WriteFlag>): ReadonlyArray<FlagRule> {
  return [...new Set(flags.map((flag) => flag.rule))]
}
