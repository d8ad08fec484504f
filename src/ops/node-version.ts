// Apart from start-up.ts, which reaches the database driver: `warden` checks the version
// before it loads anything else, `warden --version` included.

/**
 * Why this Node.js cannot run Warden, or null when it can. better-sqlite3's compiled module
 * needs Node-API 10 (Node.js 22.14 on the 22 line); an older Node.js does not refuse to
 * load it but crashes (a segmentation fault on 20.20 and 22.13, measured), so the version
 * is checked before any database is opened.
 */
export function describeUnsupportedNode(version: string): string | null {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 14)) return null;
  return `Warden needs Node.js 22 (22.14 or newer) or 24, and this is ${version}: scripts/install-node.sh 24 fetches Node.js 24 and prints its folder; put its bin/ first on PATH, then run npm ci in Warden's folder`;
}
