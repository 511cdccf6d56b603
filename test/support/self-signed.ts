import { execFileSync } from 'node:child_process'

/** A fresh self-signed certificate for 127.0.0.1 and localhost, written into `dir` as `{name}.crt` and `{name}.key`. */
export function selfSigned (dir: string, name: string): { cert: string, key: string } {
  const cert = `${dir}/${name}.crt`
  const key = `${dir}/${name}.key`
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
    '-days', '1', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' })
  return { cert, key }
}
