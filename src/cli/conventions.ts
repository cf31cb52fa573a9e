// The conventions every CLI here keeps, as gh, stripe and git do: --help on every command (exit 0),
// a usage error — unknown flag or command, missing or bad argument — exits 2 with the command's
// usage line, and under --json every failure is one JSON object on stderr (output.ts). Applied to
// the whole commander tree once it is built: commander copies settings only into subcommands
// created after them, so setting them on the root first would miss nothing but is easy to get wrong.
import { CommanderError, InvalidArgumentError, type Command } from 'commander';
import { EXIT, UsageError, failureOf, printFailure } from './output.ts';

/** --json anywhere before a lone "--" (the flag is global, so it may follow the subcommand). */
export function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** The command as typed: "svc quote-get-pulse". */
export function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

export function usageLine(c: Command): string {
  return `Usage: ${commandPath(c)} ${c.usage()}`;
}

/** A commander argument parser for a non-negative integer (a bad value is a usage error, exit 2). */
export const nonNegativeInt = (name: string) => (v: string): number => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  }
  return n;
};

/** "Examples:" after a command's help, one `$ command` a line, each with an optional comment. */
export function examples(c: Command, lines: readonly (readonly [string, string?])[]): Command {
  const width = Math.max(0, ...lines.filter(([, about]) => about).map(([cmd]) => cmd.length));
  const text = lines.map(([cmd, about]) => `  $ ${about ? `${cmd.padEnd(width)}  # ${about}` : cmd}`);
  return c.addHelpText('after', `\nExamples:\n${text.join('\n')}`);
}

export interface Run {
  json: boolean;
  /** the command whose action is running (its usage line goes with a UsageError) */
  active?: Command;
  /** the command commander refused to parse */
  failed?: Command;
  /** shown with a connection failure that is not about the certificate */
  unreachableHint?: string;
  /** the exit code of a command that printed its reply but found something wrong (svc-admin audit) */
  exit?: number;
}

/** Sets the exit and output conventions on every command of the tree. */
export function applyConventions(root: Command, run: Run): void {
  const walk = (c: Command) => {
    c.exitOverride((e) => {
      run.failed = c;
      throw e;
    });
    // under --json commander's own error text (and help shown because of an error) stays unprinted
    c.configureOutput({ writeErr: run.json ? () => {} : (s) => process.stderr.write(s) });
    c.showHelpAfterError(`${usageLine(c)}\n(run '${commandPath(c)} --help' for details)`);
    for (const sub of c.commands) walk(sub);
  };
  walk(root);
  root.hook('preAction', (_root, action) => { run.active = action; });
}

/**
 * A CLI's main: the tree `build` makes from the run state (--json read from argv first, so even a
 * usage error honours it), the conventions on it, then parse and run. `unreachableHint` is what to
 * check when the service cannot be reached.
 */
export function runCli(
  argv: readonly string[], unreachableHint: string, build: (run: Run) => Command,
): Promise<number> {
  const run: Run = { json: jsonRequested(argv), unreachableHint };
  const root = build(run);
  applyConventions(root, run);
  return runProgram(root, argv, run);
}

/** Parses and runs; every failure becomes its exit code (and, under --json, one JSON object). */
export async function runProgram(root: Command, argv: readonly string[], run: Run): Promise<number> {
  try {
    await root.parseAsync([...argv], { from: 'user' });
    return run.exit ?? EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return EXIT.ok; // --help, --version, help
      if (run.json) {
        const where = run.failed ?? root;
        const message = e.code === 'commander.help' ? 'a command is required' : e.message.replace(/^error: /, '');
        printFailure({ exit: EXIT.usage, source: 'cli', code: 'usage', message, usage: usageLine(where) }, true);
      }
      return EXIT.usage;
    }
    const f = failureOf(e, run.unreachableHint ? { unreachableHint: run.unreachableHint } : {});
    if (e instanceof UsageError) {
      const c = run.active ?? root;
      f.usage = `${usageLine(c)}${run.json ? '' : `\n(run '${commandPath(c)} --help' for details)`}`;
    }
    return printFailure(f, run.json);
  }
}
