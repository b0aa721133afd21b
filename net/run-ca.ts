// @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the Reflect metadata polyfill loaded first.
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { isIP } from "node:net";
import { createSecureContext, type SecureContext } from "node:tls";

/** A certificate authority that lives as long as one proxy: its certificate, and leaf certificates it signs on demand. */
export interface RunCa {
  /** The CA certificate (PEM), what a command must trust; its private key never leaves this process's memory. */
  readonly certPem: string;
  /** A TLS server context presenting a certificate for `host` signed by this CA (made once per host, then cached). */
  contextFor(host: string): Promise<SecureContext>;
  /** The same certificate (with this CA after it) and its private key as PEM, for a TLS server that takes PEM (tests' upstream servers). */
  leafFor(host: string): Promise<{ cert: string; key: string }>;
}

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** Clock skew between Pencil and the command is nil (same machine); an hour back tolerates a lagging client clock anyway. */
const BACKDATE_MS = 60 * 60 * 1000;
/** Long enough for any run; a run's CA is discarded with its proxy. */
const VALID_MS = 7 * 24 * 60 * 60 * 1000;

function serial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f; // positive
  return Buffer.from(bytes).toString("hex");
}

/** Makes a fresh CA (ECDSA P-256; the private key is not extractable, kept in memory only). */
export async function createRunCa(name = "Pencil proxy (this run only)"): Promise<RunCa> {
  const caKeys = await crypto.subtle.generateKey(ALG, false, ["sign", "verify"]);
  const now = Date.now();
  const notBefore = new Date(now - BACKDATE_MS);
  const notAfter = new Date(now + VALID_MS);
  const ca = await X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name.replace(/[,=+<>#;"\\]/g, " ")}`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new BasicConstraintsExtension(true, 0, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
      await SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const leaves = new Map<string, Promise<{ cert: string; key: string; context: SecureContext }>>();

  async function makeLeaf(host: string): Promise<{ cert: string; key: string; context: SecureContext }> {
    const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
    const leaf = await X509CertificateGenerator.create({
      serialNumber: serial(),
      // The common name is informative only (clients match the alternative name); a name of up to 64 characters fits it.
      subject: `CN=${host.length <= 64 ? host : "pencil-proxied-host"}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingKey: caKeys.privateKey,
      publicKey: keys.publicKey,
      signingAlgorithm: ALG,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new SubjectAlternativeNameExtension([{ type: isIP(host) ? "ip" : "dns", value: host }]),
      ],
    });
    const key = PemConverter.encode(await crypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
    const cert = `${leaf.toString("pem")}\n${ca.toString("pem")}\n`;
    return { cert, key, context: createSecureContext({ key, cert }) };
  }

  function cached(host: string) {
    const name = host.toLowerCase();
    let leaf = leaves.get(name);
    if (!leaf) {
      leaf = makeLeaf(name);
      // A failure is not cached: the next tunnel to the host tries again.
      leaf.catch(() => leaves.delete(name));
      leaves.set(name, leaf);
    }
    return leaf;
  }

  return {
    certPem: `${ca.toString("pem")}\n`,
    contextFor: async (host) => (await cached(host)).context,
    leafFor: async (host) => {
      const { cert, key } = await cached(host);
      return { cert, key };
    },
  };
}
