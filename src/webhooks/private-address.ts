import { BlockList, isIP } from "node:net";

// Which hosts a webhook may not reach unless WARDEN_ALLOW_PRIVATE_WEBHOOKS=1: a vendor
// could otherwise point an endpoint at the service's own network (cloud metadata, the
// database) and read the answers in its delivery log. The same rules are applied when an
// endpoint is registered and to the address each connection is actually made to; the
// README beside this file says what is refused and why.

const PRIVATE_IPV4 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT (Alibaba Cloud's metadata is 100.100.100.200)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local: the metadata service of most clouds
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // the deprecated 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
] as const) {
  PRIVATE_IPV4.addSubnet(net, prefix, "ipv4");
}

// IPv6: only global unicast (2000::/3) is public, less the special ranges within it;
// outside it are unique local (fc00::/7: AWS's IPv6 metadata is fd00:ec2::254),
// link-local, site-local, multicast, discard-only, NAT64 for local use (64:ff9b:1::/48,
// where the network chooses how the IPv4 address is placed) and unassigned space. The
// forms that carry an IPv4 address (below) are judged by that address, in 2000::/3 or not.
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet("2000::", 3, "ipv6");
const PRIVATE_IPV6 = new BlockList();
for (const [net, prefix] of [
  ["::", 128], // unspecified: reaches the local host, as 0.0.0.0 does
  ["::1", 128],
  ["2001:2::", 48], // benchmarking
  ["2001:10::", 28], // ORCHID
  ["2001:20::", 28], // ORCHIDv2
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation
] as const) {
  PRIVATE_IPV6.addSubnet(net, prefix, "ipv6");
}

/** An IPv6 address (without a zone id) as its eight 16-bit groups; the caller has checked it with isIP. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const ipv4Of = (high: number, low: number) => `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for, and how, when it is one of the forms that
 * carry one: a stack or a translator on the way may deliver it to that IPv4 address, so
 * it must be judged as that address.
 */
function embeddedIpv4(groups: number[]): { ipv4: string; form: string } | null {
  const group = (i: number) => groups[i] ?? 0;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const last32 = ipv4Of(group(6), group(7));
  if (zero(0, 6)) return { ipv4: last32, form: "IPv4-compatible" };
  if (zero(0, 5) && group(5) === 0xffff) return { ipv4: last32, form: "IPv4-mapped" };
  if (zero(0, 4) && group(4) === 0xffff && group(5) === 0) return { ipv4: last32, form: "IPv4-translated" };
  if (group(0) === 0x64 && group(1) === 0xff9b && zero(2, 6)) return { ipv4: last32, form: "NAT64" };
  if (group(0) === 0x2002) return { ipv4: ipv4Of(group(1), group(2)), form: "6to4" };
  // Teredo carries its client's address inverted, bit by bit, in the last 32 bits.
  if (group(0) === 0x2001 && group(1) === 0) return { ipv4: ipv4Of(~group(6) & 0xffff, ~group(7) & 0xffff), form: "Teredo" };
  return null;
}

/** Why an IP address is not a public one, or null; anything that is not an IP address is refused. */
function privateAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return PRIVATE_IPV4.check(address, "ipv4") ? `${address} is a private address` : null;
  if (family !== 6) return `${address} is not an IP address`;
  const bare = address.replace(/%.*$/, "");
  if (PRIVATE_IPV6.check(bare, "ipv6")) return `${address} is a private address`;
  const embedded = embeddedIpv4(ipv6Groups(bare));
  if (embedded) {
    return PRIVATE_IPV4.check(embedded.ipv4, "ipv4") ? `${address} is a private address (${embedded.form}, it carries ${embedded.ipv4})` : null;
  }
  return GLOBAL_UNICAST.check(bare, "ipv6") ? null : `${address} is a private address (outside 2000::/3, the global unicast range)`;
}

export function isPrivateAddress(address: string): boolean {
  return privateAddressReason(address) !== null;
}

// The names of cloud metadata services, refused by name so that the error says so (the
// rules below refuse them too, and their addresses are refused when connecting).
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"]);
// Names reserved for local use, which no public resolver answers: RFC 6761 (localhost),
// RFC 6762 (local, mDNS), RFC 8375 (home.arpa), ICANN's 2024 reservation (internal).
const LOCAL_SUFFIXES = ["localhost", "local", "home.arpa", "internal"];

/**
 * Why a URL's host may not receive webhooks, or null. The host is an IP address (IPv6
 * with or without brackets) or a name; a name is judged in lower case without its
 * trailing dots, as a resolver reads it. A public name may still resolve to a private
 * address: that is refused when the connection is made.
 */
export function privateHostReason(host: string): string | null {
  const unbracketed = host.replace(/^\[(.*)\]$/, "$1");
  if (isIP(unbracketed) !== 0) return privateAddressReason(unbracketed);
  const name = host.toLowerCase().replace(/\.+$/, "");
  if (METADATA_NAMES.has(name)) return `${name} is a cloud metadata service's name`;
  if (LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) return `${name} is a local-only name`;
  // A name without a dot is looked up in the resolver's search domains: a host of the
  // local network (on Google Cloud "metadata" is the metadata service).
  if (!name.includes(".")) return `${name || host} is a single-label name, resolved only on the local network`;
  return null;
}
