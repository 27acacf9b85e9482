// What GET /metrics says about credential health: refreshes by provider and outcome (counted by the
// process that made them), and locations per provider and status (read from the database when
// scraped, so every process answers the same).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../../db/database.js';

export type RefreshOutcome = 'success' | 'terminal' | 'interaction' | 'client' | 'passing';

export interface RefreshMetrics {
  refreshed(provider: string, outcome: RefreshOutcome): void;
}

export function refreshMetrics(registry: Registry, db: Db): RefreshMetrics {
  const refreshes = new Counter({
    name: 'ferry_oauth_refreshes_total',
    help: 'OAuth token refreshes this process made, by provider and outcome (success, terminal, interaction, client, passing)',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'ferry_locations',
    help: 'Locations by provider and status (active, failed, needs_attention)',
    labelNames: ['provider', 'status'] as const,
    registers: [registry],
    async collect() {
      const rows = await db.kysely
        .selectFrom('locations')
        .select(['provider', 'status', (eb) => eb.fn.countAll<number | string>().as('count')])
        .groupBy(['provider', 'status'])
        .execute();
      this.reset();
      for (const row of rows) this.set({ provider: row.provider, status: row.status }, Number(row.count));
    },
  });
  return { refreshed: (provider, outcome) => refreshes.inc({ provider, outcome }) };
}
