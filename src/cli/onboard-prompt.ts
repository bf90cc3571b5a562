import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliExit, EXIT_USAGE } from './common.ts';

/** One question of `steward onboard`; `flag` is the option that answers it without asking. */
export type Question = {
  prompt: string;
  flag: string;
  /** The value the flag gave, if any. */
  given?: string;
  secret?: boolean;
  /** Offered in brackets; Enter takes it. */
  fallback?: string;
  /** Empty answers are refused (asked again; with --non-interactive the flag is named as missing). */
  required?: boolean;
};

/**
 * How onboarding talks to the person: interactive (a terminal or piped lines; secrets are not
 * echoed on a terminal) or not (every answer from its flag or its default, a missing required
 * one is a usage error naming the flag).
 */
export type Prompter = {
  readonly interactive: boolean;
  ask(question: Question): Promise<string>;
  /** Yes/no; `given` is the flag's answer. */
  confirm(prompt: string, given: boolean | undefined, fallback: boolean): Promise<boolean>;
  choose<T extends string>(
    prompt: string,
    choices: readonly T[],
    given: T | undefined,
    fallback: T,
  ): Promise<T>;
  say(line: string): void;
  close(): void;
};

export function nonInteractivePrompter(output: NodeJS.WritableStream = process.stdout): Prompter {
  return {
    interactive: false,
    async ask(question) {
      const value = question.given ?? question.fallback ?? '';
      if (question.required && !value)
        throw new CliExit(
          EXIT_USAGE,
          `steward onboard: --non-interactive needs ${question.flag} (${question.prompt})`,
        );
      return value;
    },
    async confirm(_prompt, given, fallback) {
      return given ?? fallback;
    },
    async choose(_prompt, _choices, given, fallback) {
      return given ?? fallback;
    },
    say(line) {
      output.write(`${line}\n`);
    },
    close() {},
  };
}

export function interactivePrompter(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Prompter {
  let muted = false;
  const echo = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const terminal = input.isTTY === true;
  const reader = createInterface({ input, output: echo, terminal });
  // Lines are read through the iterator, which keeps those piped in before a question was asked.
  const lines = reader[Symbol.asyncIterator]();
  const line = async (prompt: string, secret = false): Promise<string> => {
    output.write(prompt);
    muted = secret && terminal;
    const next = await lines.next();
    if (muted) output.write('\n');
    muted = false;
    if (next.done)
      throw new CliExit(EXIT_USAGE, '\nsteward onboard: the input ended before every question was answered');
    return String(next.value).trim();
  };
  return {
    interactive: true,
    async ask(question) {
      if (question.given !== undefined) {
        output.write(
          `${question.prompt}: ${question.secret ? '(given)' : question.given} (from ${question.flag})\n`,
        );
        return question.given;
      }
      for (;;) {
        const shown = question.fallback && !question.secret ? ` [${question.fallback}]` : '';
        const answer =
          (await line(`${question.prompt}${shown}: `, question.secret)) || question.fallback || '';
        if (answer || !question.required) return answer;
        output.write('  This one is needed.\n');
      }
    },
    async confirm(prompt, given, fallback) {
      if (given !== undefined) return given;
      for (;;) {
        const answer = (await line(`${prompt} [${fallback ? 'Y/n' : 'y/N'}]: `)).toLowerCase();
        if (!answer) return fallback;
        if (['y', 'yes'].includes(answer)) return true;
        if (['n', 'no'].includes(answer)) return false;
        output.write('  Answer y or n.\n');
      }
    },
    async choose(prompt, choices, given, fallback) {
      if (given !== undefined) return given;
      for (;;) {
        const answer = (await line(`${prompt} (${choices.join('/')}) [${fallback}]: `)).toLowerCase();
        if (!answer) return fallback;
        const chosen = choices.find((choice) => choice === answer);
        if (chosen) return chosen;
        output.write(`  Answer one of ${choices.join(', ')}.\n`);
      }
    },
    say(text) {
      output.write(`${text}\n`);
    },
    close() {
      reader.close();
    },
  };
}
