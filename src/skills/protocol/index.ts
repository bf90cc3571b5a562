export type { CommandBlock } from './extract-commands.ts';
export { extractCommands, findCommandBlocks } from './extract-commands.ts';
export { formatCommand } from './format-command.ts';
export type { FlagValue, ParsedCommand, ParseResult } from './parse-command.ts';
export { normalizeFlagName, parseCommand } from './parse-command.ts';
export { quoteArg } from './quote-arg.ts';
export { splitCommands } from './split-commands.ts';
export type { Token, TokenizeResult } from './tokenize.ts';
export { tokenize } from './tokenize.ts';
