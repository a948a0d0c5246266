import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/**
 * A self-signed certificate for `contact-hooks listen`'s receiver on 127.0.0.1 and localhost,
 * made with Node's crypto alone (an ECDSA P-256 key; the X.509 structure written in DER here), so
 * the command needs no openssl and runs wherever Node does. No CA signs it: the service trusts it
 * by its fingerprint, which `listen` leaves in DATA_DIR while it runs.
 */
export interface ListenCertificate {
  key: string;
  cert: string;
}

const VALIDITY_MS = 7 * 24 * 3_600_000;
/** A receiver's clock a little behind ours must still find the certificate valid. */
const BACKDATE_MS = 3_600_000;

export function createListenCertificate(now = new Date()): ListenCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const signatureAlgorithm = sequence(oid('1.2.840.10045.4.3.2')); // ecdsa-with-SHA256
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8String('contact-hooks listen')))); // CN
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and no leading zero byte: DER's minimal form
  const subjectAltName = sequence(
    tagged(0x87, Buffer.from([127, 0, 0, 1])), // iPAddress 127.0.0.1
    tagged(0x87, Buffer.alloc(16, 0).fill(1, 15)), // iPAddress ::1
    tagged(0x82, Buffer.from('localhost')), // dNSName
  );
  const toBeSigned = sequence(
    tagged(0xa0, integer(Buffer.from([2]))), // version 3
    integer(serial),
    signatureAlgorithm,
    name,
    sequence(utcTime(new Date(now.getTime() - BACKDATE_MS)), utcTime(new Date(now.getTime() + VALIDITY_MS))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tagged(0xa3, sequence(sequence(oid('2.5.29.17'), octetString(subjectAltName)))),
  );
  const signature = sign('sha256', toBeSigned, privateKey); // DER-encoded ECDSA, as X.509 wants it
  const certificate = sequence(toBeSigned, signatureAlgorithm, bitString(signature));
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`,
  };
}

// DER: each value is its tag, its length, then its content.
function tagged(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const sequence = (...content: Buffer[]) => tagged(0x30, ...content);
const set = (...content: Buffer[]) => tagged(0x31, ...content);
const integer = (bigEndian: Buffer) => tagged(0x02, bigEndian);
const octetString = (content: Buffer) => tagged(0x04, content);
const utf8String = (text: string) => tagged(0x0c, Buffer.from(text, 'utf8'));
/** No unused bits in the last byte. */
const bitString = (content: Buffer) => tagged(0x03, Buffer.from([0]), content);

/** UTCTime (YYMMDDHHMMSSZ), what X.509 uses for dates before 2050. */
const utcTime = (date: Date) => tagged(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`));

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tagged(0x06, Buffer.from(bytes));
}
