/**
 * A database of a bench run's own on the PostgreSQL server at `adminUrl` (DATABASE_URL), so a run
 * never writes into the database it was pointed at; its URL is returned.
 */
export const freshDatabase = async (adminUrl: string): Promise<string> => {
  const { default: pg } = await import("pg")
  const name = `p2v_bench_${Math.random().toString(36).slice(2, 10)}`
  const c = new pg.Client({ connectionString: adminUrl })
  await c.connect()
  await c.query(`CREATE DATABASE ${name}`)
  await c.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}
