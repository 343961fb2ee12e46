import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { orchestratorAddress, serverNameOption } from "../../src/cli/address-option.js";
import { formatHostPort, parseHostPort } from "../../src/quic/address.js";

describe("serve --orchestrator-addr parsing", () => {
  it("accepts host:port and [v6]:port", () => {
    expect(orchestratorAddress("localhost:50100")).toBe("localhost:50100");
    expect(orchestratorAddress("[::1]:50100")).toBe("[::1]:50100");
  });

  it("rejects malformed addresses and port 0 as usage errors", () => {
    for (const bad of ["", " ", "nope", "127.0.0.1:abc", "[::1]", "127.0.0.1:0", "127.0.0.1:70000", ":50100"]) {
      expect(() => orchestratorAddress(bad), bad).toThrow(InvalidArgumentError);
    }
    expect(() => orchestratorAddress("127.0.0.1:0")).toThrow(/port 0 cannot be connected to/);
  });
});

describe("parseHostPort and IPv6 hosts", () => {
  it("takes a bare IPv6 address as the host, and asks for brackets around one followed by a port", () => {
    expect(parseHostPort("::1", 9)).toEqual({ host: "::1", port: 9 });
    expect(parseHostPort("2001:db8::5", 9)).toEqual({ host: "2001:db8::5", port: 9 });
    expect(parseHostPort("[2001:db8::5]:443")).toEqual({ host: "2001:db8::5", port: 443 });
    expect(parseHostPort("127.0.0.1:443")).toEqual({ host: "127.0.0.1", port: 443 });
    expect(() => parseHostPort("a:b:443")).toThrow(/an IPv6 host needs brackets \(\[a:b\]:443\)/);
    expect(() => parseHostPort("2001:db8::5")).toThrow(/missing port/);
  });
});

describe("formatHostPort", () => {
  it.each([
    ["127.0.0.1", "127.0.0.1:7000"],
    ["localhost", "localhost:7000"],
    ["::1", "[::1]:7000"],
    ["fe80::1%eth0", "[fe80::1%eth0]:7000"],
    ["2001:db8::ff00:42:8329", "[2001:db8::ff00:42:8329]:7000"],
    ["[::1]", "[::1]:7000"],
  ])("%s → %s", (host, expected) => {
    expect(formatHostPort(host, 7000)).toBe(expected);
  });
});

describe("serve --server-name parsing", () => {
  it("accepts a DNS name and rejects an empty or blank one as a usage error", () => {
    expect(serverNameOption("orchestrator.example")).toBe("orchestrator.example");
    for (const bad of ["", " ", "a b"]) expect(() => serverNameOption(bad), JSON.stringify(bad)).toThrow(InvalidArgumentError);
  });
});
