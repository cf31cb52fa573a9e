// `svc config list|get|set|unset`, as gh config: list and get show what a call would use and where
// each value comes from (flag > env > profile > default, settings.ts), so "which node am I talking
// to, with which pin" has an answer; set and unset change the profile (--profile, or "default").
import { Argument, type Command } from 'commander';
import { examples } from './conventions.ts';
import { CliFailure, HUMAN, type Printable, type Runner } from './output.ts';
import { configPath, profileNames, updateProfile, type Profile } from './profiles.ts';
import { SETTINGS, chosenProfile, resolveSetting, settingNamed, type SettingSpec } from './settings.ts';

const keyArgument = () => new Argument('<key>', 'edge, pin or machine-id').choices(SETTINGS.map((s) => s.key));

export function addConfigCommand(program: Command, run: Runner): void {
  const config = program.command('config')
    .description('show the settings a call uses and where each comes from; change a profile\'s');
  const list = config.command('list')
    .description('every setting a call would use, and where it comes from (flag > env > profile > default)')
    .action(() => run(async () => listed(program)));
  examples(list, [['svc config list'], ['svc --profile staging config list --json']]);
  const get = config.command('get').addArgument(keyArgument())
    .description('the value a call would use for one setting (exit 1 when it has none)')
    .action((key: string) => run(async () => got(program, settingNamed(key))));
  examples(get, [['svc config get pin', 'the edge pin the profile (or SVC_EDGE_PIN, --pin) gives']]);
  const set = config.command('set').addArgument(keyArgument()).argument('<value>')
    .description('save a setting in the profile (--profile; made when new)')
    .action((key: string, value: string) => run(async () => changed(program, settingNamed(key), value)));
  examples(set, [
    ['svc config set machine-id my-agent'],
    ['svc --profile staging config set edge staging.example:9443'],
  ]);
  const unset = config.command('unset').addArgument(keyArgument())
    .description('remove a setting from the profile')
    .action((key: string) => run(async () => changed(program, settingNamed(key), undefined)));
  examples(unset, [['svc config unset machine-id']]);
  examples(config, [
    ['svc config list', 'edge, pin and machine-id, each with its source'],
    ['svc config set machine-id my-agent', 'saved in the profile'],
  ]);
}

function listed(root: Command): Printable {
  const { name, profile } = chosenProfile(root);
  const settings = Object.fromEntries(SETTINGS.map((s) => [s.key, resolveSetting(s, root, profile, name)]));
  const width = Math.max(...SETTINGS.map((s) => s.key.length), 'profile'.length) + 2;
  const row = (k: string, v: string, from: string) => `${k.padEnd(width)}${v}  (${from})`;
  const text = [
    row('profile', name, `${profile ? '' : 'not saved, '}${configPath()}`),
    ...SETTINGS.map((s) => {
      const r = settings[s.key]!;
      return r.value === undefined ? `${s.key.padEnd(width)}(not set)` : row(s.key, r.value, r.from);
    }),
  ].join('\n');
  return { profile: name, config_file: configPath(), profiles: profileNames(), settings, [HUMAN]: text };
}

function got(root: Command, s: SettingSpec): Printable {
  const { name, profile } = chosenProfile(root);
  const r = resolveSetting(s, root, profile, name);
  if (r.value === undefined) {
    throw new CliFailure('not_set', `${s.key} is not set (not --${s.key}, ${s.env} or profile "${name}")`,
      { hint: `svc config set ${s.key} ${s.value}, or svc login` });
  }
  return { key: s.key, ...r, [HUMAN]: r.value };
}

function changed(root: Command, s: SettingSpec, value: string | undefined): Printable {
  const { name } = chosenProfile(root, value !== undefined);
  const saved = value === undefined ? undefined : s.check(value);
  updateProfile(name, (p: Profile) => {
    const next = { ...p };
    if (saved === undefined) delete next[s.field]; else next[s.field] = saved;
    return next;
  });
  const what = saved === undefined ? `${s.key} removed from` : `${s.key} = ${saved} saved in`;
  return {
    profile: name, key: s.key, value: saved ?? null, config_file: configPath(),
    [HUMAN]: `${what} profile "${name}" (${configPath()})`,
  };
}
