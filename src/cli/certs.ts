/**
 * `orchestra-stdio certs`: the cert store (src/pki/store.ts, docs/certificates.md) from the
 * command line.
 *
 * - `certs init [--certs-dir DIR] [--name NAME...]`: creates what is missing (the CA, then a
 *   certificate per name; default the orchestrator's and the bridge's), repairs what the store
 *   can repair, and prints each file used. Exit 0, or 1 with the store's message.
 * - `certs show [--certs-dir DIR] [--json]`: changes nothing; prints the CA, every leaf (expiry,
 *   key/certificate match, signed by the CA, key mode) and the problems with their fixes.
 *   Exit 0 when there is no problem, 1 when there is one.
 *
 * Like `serve`, both read `--certs-dir` from `ORCHESTRA_CERTS_DIR` too (a flag wins; see
 * environment.ts), so they work on the store `serve` would use; another `ORCHESTRA_*` variable
 * set is a `warning:` line.
 */
import { Option, type Command } from "commander";
import { envVarName, warnAboutVariables } from "./environment.js";
import { certsDirPath } from "./path-options.js";

interface CertsOptions {
  certsDir?: string;
}

function certsDirOption(): Option {
  return new Option("--certs-dir <dir>", "cert store directory (default ~/.orchestra/certs)").env(envVarName("--certs-dir")).argParser(certsDirPath);
}

export function registerCertsCommand(program: Command): void {
  const certs = program.command("certs").description("create or inspect the cert store (ca.crt, ca.key, <name>.crt/.key) used for mutual TLS");
  certs
    .command("init")
    .description("create the CA and party certificates that are missing (nothing existing is replaced unless broken and ours to repair)")
    .addOption(certsDirOption())
    .option("--name <name...>", "party names to issue certificates for (default: orchestrator transport.stdio-client)")
    .action(async (opts: CertsOptions & { name?: string[] }) => {
      const { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, literalTildeRefusal, ORCHESTRATOR_CERT_NAME } = await import("../pki/store.js");
      const dir = opts.certsDir ?? defaultCertsDir();
      const tilde = literalTildeRefusal(dir);
      if (tilde !== undefined) {
        process.stderr.write(`orchestra-stdio certs init: ${tilde}\n`);
        process.exitCode = 2;
        return;
      }
      const warn = (m: string) => process.stderr.write(`warning: ${m}\n`);
      try {
        let caShown = false;
        for (const name of opts.name ?? [ORCHESTRATOR_CERT_NAME, BRIDGE_CERT_NAME]) {
          const store = await ensureCertStore(dir, name, { warn });
          if (!caShown) process.stdout.write(`${store.created.ca ? "created" : "using"} CA ${store.paths.ca}\n`);
          caShown = true;
          process.stdout.write(`${store.created.cert ? "created" : "using"} ${name}: ${store.paths.cert}, ${store.paths.key}\n`);
        }
      } catch (err) {
        process.stderr.write(`orchestra-stdio certs init: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
  certs
    .command("show")
    .description("print the CA and certificates of a store: expiry, key/certificate match, CA signature, permissions (exit 1 on a problem)")
    .addOption(certsDirOption())
    .option("--json", "print the report as JSON")
    .action(async (opts: CertsOptions & { json?: boolean }) => {
      const { defaultCertsDir, inspectCertStore } = await import("../pki/store.js");
      let report: Awaited<ReturnType<typeof inspectCertStore>>;
      try {
        report = await inspectCertStore(opts.certsDir ?? defaultCertsDir());
      } catch (err) {
        process.stderr.write(`orchestra-stdio certs show: ${(err as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      const problems = [...report.problems, ...(report.ca?.problems ?? []), ...report.leaves.flatMap((l) => l.problems)];
      if (opts.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
      else process.stdout.write(formatReport(report, problems));
      process.exitCode = problems.length === 0 ? 0 : 1;
    });
  for (const command of certs.commands) {
    // A usage error names the sub-command's own help (created with the program's hint, `orchestra-stdio --help`).
    command.showHelpAfterError(`see \`orchestra-stdio certs ${command.name()} --help\``);
    warnAboutVariables(command);
  }
}

type Report = Awaited<ReturnType<typeof import("../pki/store.js").inspectCertStore>>;
type Entry = NonNullable<Report["ca"]>;

function formatReport(report: Report, problems: string[]): string {
  const lines = [`cert store ${report.dir}${report.mode ? ` (mode ${report.mode})` : ""}`];
  const entry = (label: string, e: Entry): string => {
    const parts = [
      e.subject ?? "unreadable",
      e.notAfter ? `${e.expired ? "expired" : "expires"} ${e.notAfter}` : undefined,
      e.keyPresent ? `key ${e.keyMode}${e.keyMatches === undefined ? "" : e.keyMatches ? ", matches" : ", DOES NOT MATCH"}` : "no key",
      e.signedByCa === undefined ? undefined : e.signedByCa ? "signed by the CA" : "NOT signed by the CA",
    ];
    return `  ${label} ${e.certFile}: ${parts.filter((p) => p !== undefined).join("; ")}`;
  };
  if (report.ca) lines.push(entry("CA  ", report.ca));
  for (const leaf of report.leaves) lines.push(entry("leaf", leaf));
  if (problems.length === 0) lines.push("no problems");
  else for (const p of problems) lines.push(`problem: ${p}`);
  return lines.join("\n") + "\n";
}
