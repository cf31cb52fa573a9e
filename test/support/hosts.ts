// Hosts for tests that cross a network: Linux network namespaces (`ip netns`), each with its own network
// stack, loopback and address, joined by veth pairs to one bridge in this process's namespace, which
// holds the bridge's address and so reaches every host (the test runner is the LAN's client). A process
// runs on a host through `ip netns exec NS`, which execs it (same pid: signals reach it). A host's
// link is cut with `ip link set <its veth> down`: its packets go nowhere, no reset, as a pulled cable.
// Everything is removed by destroy(), and by a watchdog if this process ends without it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Need } from './needs.ts';

const isRoot = process.getuid?.() === 0;
const hasIp = spawnSync('sh', ['-c', 'command -v ip'], { encoding: 'utf8' }).status === 0;

/** testNeeding's need: root and iproute2 (`ip netns`). */
export const NETNS: Need = {
  what: isRoot ? 'iproute2 (ip netns)' : 'root, for ip netns',
  present: isRoot && hasIp,
  hint: 'apt-get install iproute2, and run as root (.ci/run does)',
};

export interface Host {
  name: string;
  /** the namespace's name */
  ns: string;
  /** its address on the bridge's /24 */
  ip: string;
  /** the veth end on the bridge (down: the host is cut off) */
  link: string;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export class Hosts {
  private constructor(
    readonly tag: string, readonly bridge: string, readonly subnet: string, readonly hosts: Map<string, Host>,
  ) {}

  /** The bridge's address: where the hosts see this process (the client) come from. */
  get clientIp(): string { return `${this.subnet}.1`; }

  /** A host per name, on a fresh bridge and /24 (10.231–250.x.0/24, picked at random). */
  static create(names: string[]): Hosts {
    const tag = `svc${randomBytes(2).toString('hex')}`;
    const subnet = `10.${231 + Math.floor(Math.random() * 20)}.${1 + Math.floor(Math.random() * 250)}`;
    const bridge = `${tag}br`;
    const hosts = new Map<string, Host>();
    const h = new Hosts(tag, bridge, subnet, hosts);
    h.#watchdog();
    try {
      ip('link', 'add', bridge, 'type', 'bridge');
      ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
      ip('link', 'set', bridge, 'up');
      names.forEach((name, i) => {
        const host = { name, ns: `${tag}-${name}`, ip: `${subnet}.${11 + i}`, link: `${tag}v${i}` };
        ip('netns', 'add', host.ns);
        ip('link', 'add', host.link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.ns);
        ip('link', 'set', host.link, 'master', bridge, 'up');
        ip('netns', 'exec', host.ns, 'ip', 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0');
        ip('netns', 'exec', host.ns, 'ip', 'link', 'set', 'eth0', 'up');
        ip('netns', 'exec', host.ns, 'ip', 'link', 'set', 'lo', 'up');
        hosts.set(name, host);
      });
    } catch (e) {
      h.destroy();
      throw e;
    }
    return h;
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /** The command prefix that runs a program on `name`. */
  on(name: string): string[] {
    return ['ip', 'netns', 'exec', this.host(name).ns];
  }

  /** Cuts `name` off the network (true) or plugs it back (false). */
  cut(name: string, down: boolean): void {
    ip('link', 'set', this.host(name).link, down ? 'down' : 'up');
  }

  destroy(): void {
    for (const host of this.hosts.values()) spawnSync('ip', ['netns', 'del', host.ns]);
    spawnSync('ip', ['link', 'del', this.bridge]);
    // a namespace whose creation failed half way is not in the map
    const left = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n')
      .map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`${this.tag}-`));
    for (const ns of left) spawnSync('ip', ['netns', 'del', ns]);
  }

  /** Removes the namespaces and the bridge once this process is gone, however it ended. */
  #watchdog(): void {
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; `
      + `for n in $(ip netns list | cut -d' ' -f1 | grep '^${this.tag}-'); do ip netns del "$n"; done; `
      + `ip link del ${this.bridge} 2>/dev/null`;
    spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
  }
}
