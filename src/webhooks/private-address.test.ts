// Which hosts a webhook may not reach; the API's and the worker's use of these rules are
// tested in webhook.routes.test.ts and delivery.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isPrivateAddress, privateHostReason } from "./private-address.js";

describe("private addresses and names", () => {
  test("private, loopback, link-local and other non-public addresses are recognised", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "100.100.100.200",
      "0.0.0.0",
      "198.18.0.1",
      "198.19.255.255",
      "192.0.0.8",
      "192.0.2.1",
      "192.88.99.1",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fd12::1",
      "fd00:ec2::254",
      "fe80::1",
      "fe80::1%eth0",
      "fec0::1",
      "ff02::1",
      "2001:db8::1",
      "3fff::1",
      "2001:2::1",
      "2001:10::1",
      "2001:20::1",
      "100::1",
      "1::8",
      "::ffff:10.0.0.1",
      "::ffff:7f00:1",
      "not-an-ip",
    ]) {
      assert.equal(isPrivateAddress(address), true, address);
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) assert.equal(isPrivateAddress(address), false, address);
  });

  test("an IPv6 address that carries a non-public IPv4 address is judged by that address, in every form", () => {
    const carrying = {
      "IPv4-compatible": ["::7f00:1", "::127.0.0.1", "::a9fe:a9fe", "::10.0.0.1"],
      "IPv4-mapped": ["::ffff:127.0.0.1", "::ffff:a9fe:a9fe", "0:0:0:0:0:ffff:192.168.1.1"],
      "IPv4-translated": ["::ffff:0:7f00:1", "::ffff:0:10.0.0.1"],
      NAT64: ["64:ff9b::7f00:1", "64:ff9b::169.254.169.254", "64:ff9b::a00:1"],
      "6to4": ["2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101:1::1", "2002:a00:1:ffff::"],
      // The client's address is the last 32 bits inverted: 80ff:fffe is 127.0.0.1, 5601:5601 169.254.169.254.
      Teredo: ["2001:0:4136:e378:8000:63bf:80ff:fffe", "2001::5601:5601", "2001:0:0:0:0:0:f5ff:fffe"],
    };
    for (const [form, addresses] of Object.entries(carrying)) {
      for (const address of addresses) {
        assert.equal(isPrivateAddress(address), true, address);
        assert.match(privateHostReason(address) ?? "", new RegExp(`is a private address \\(${form}, it carries `), address);
      }
    }
    assert.equal(privateHostReason("2002:7f00:1::"), "2002:7f00:1:: is a private address (6to4, it carries 127.0.0.1)");
    assert.equal(privateHostReason("2001::5601:5601"), "2001::5601:5601 is a private address (Teredo, it carries 169.254.169.254)");
    // NAT64 for local use says nothing certain about where its IPv4 address sits: all of it is refused.
    assert.equal(isPrivateAddress("64:ff9b:1::808:808"), true);
    // The same forms carrying a public address stay public (a NAT64 network reaches IPv4-only receivers so).
    for (const address of ["::808:808", "::ffff:8.8.8.8", "::ffff:0:808:808", "64:ff9b::8.8.8.8", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"]) {
      assert.equal(isPrivateAddress(address), false, address);
    }
  });

  test("local-only and cloud metadata names are refused in any case and with trailing dots; public ones are left to the connection", () => {
    for (const [host, reason] of [
      ["localhost", "localhost is a local-only name"],
      ["localhost.", "localhost is a local-only name"],
      ["LocalHost...", "localhost is a local-only name"],
      ["api.localhost.", "api.localhost is a local-only name"],
      ["printer.local", "printer.local is a local-only name"],
      ["nas.home.arpa", "nas.home.arpa is a local-only name"],
      ["db.corp.internal", "db.corp.internal is a local-only name"],
      ["metadata.google.internal", "metadata.google.internal is a cloud metadata service's name"],
      ["Metadata.Google.Internal.", "metadata.google.internal is a cloud metadata service's name"],
      ["metadata", "metadata is a cloud metadata service's name"],
      ["instance-data", "instance-data is a cloud metadata service's name"],
      ["instance-data.ec2.internal", "instance-data.ec2.internal is a cloud metadata service's name"],
      ["db", "db is a single-label name, resolved only on the local network"],
      ["kubernetes.", "kubernetes is a single-label name, resolved only on the local network"],
      ["[::1]", "::1 is a private address"],
      ["[::]", ":: is a private address"],
      ["[64:ff9b:1::a9fe:a9fe]", "64:ff9b:1::a9fe:a9fe is a private address (outside 2000::/3, the global unicast range)"],
      ["[2002:7f00:1::]", "2002:7f00:1:: is a private address (6to4, it carries 127.0.0.1)"],
    ]) {
      assert.equal(privateHostReason(host as string), reason, host);
    }
    for (const host of [
      "hooks.example.com",
      "hooks.example.com.",
      "localhost.example.com",
      "metadata.example.com",
      "93.184.216.34",
      "[2606:4700:4700::1111]",
    ]) {
      assert.equal(privateHostReason(host), null, host);
    }
  });
});
