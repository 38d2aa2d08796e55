import * as fs from "node:fs"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
// @ts-expect-error s3rver ships no types; the few calls made here are typed below
import S3rverModule from "s3rver"

/**
 * TEST CODE: a fake of an external provider, the S3 object store. It runs s3rver 3.7.1 (from npm,
 * pure JavaScript, no install script), a real S3 protocol server: SigV4-signed requests, multipart
 * uploads, HEAD/GET/DELETE with S3's XML errors, objects kept in a temp directory. It listens on
 * 127.0.0.1 only and is never part of the service.
 */
interface S3rver {
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
const S3rver = S3rverModule as new(options: Record<string, unknown>) => S3rver

export const s3AccessKey = "S3RVER" // s3rver's own fixed credentials
export const s3SecretKey = "S3RVER"

export interface S3Server {
  readonly endpoint: string
  readonly port: number
  /** the service's environment for this store (BLOB_STORE_URL and the S3_* settings) */
  readonly env: (bucket: string, prefix?: string) => Record<string, string>
  readonly close: () => Promise<void>
}

export const startS3Server = async (
  opts: { readonly buckets?: ReadonlyArray<string>; readonly port?: number } = {}
): Promise<S3Server> => {
  const directory = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-s3-"))
  const server = new S3rver({
    address: "127.0.0.1",
    port: opts.port ?? 0,
    silent: true,
    directory,
    configureBuckets: (opts.buckets ?? []).map((name) => ({ name, configs: [] }))
  })
  const address = await server.run()
  const endpoint = `http://127.0.0.1:${address.port}`
  return {
    endpoint,
    port: address.port,
    env: (bucket, prefix) => ({
      BLOB_STORE_URL: `s3://${bucket}${prefix === undefined ? "" : `/${prefix}`}`,
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      S3_ACCESS_KEY_ID: s3AccessKey,
      S3_SECRET_ACCESS_KEY: s3SecretKey,
      S3_FORCE_PATH_STYLE: "true"
    }),
    close: async () => {
      await server.close()
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }
}
