import { z } from 'zod';
import type { DealFields } from '../../../integrations/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { limitNote } from '../limit-note.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';
import { dealLine } from './format.ts';

export const searchDealsHandler = defineHandler({
  name: 'crm.deals_search',
  flags: z
    .object({
      query: flag.string().optional(),
      stage: flag.string().optional(),
      limit: flag.int({ min: 1, max: 50 }).default(10),
    })
    .strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const deals = await crm.searchDeals(
        { text: flags.query, stage: flags.stage, limit: flags.limit },
        ctx.signal,
      );
      const metadata = { ids: deals.map((deal) => deal.id), count: deals.length };
      if (deals.length === 0) return ok(`No deals match in ${crm.name}.`, { metadata });
      return ok(
        `${deals.length} deal${deals.length === 1 ? '' : 's'} in ${crm.name}:\n${fenceExternal('hubspot:deals', deals.map(dealLine).join('\n'))}${limitNote(deals.length, flags.limit, 50)}`,
        { metadata: { ...metadata, limitReached: deals.length >= flags.limit } },
      );
    });
  },
});

export const updateDealHandler = defineHandler({
  name: 'crm.deal_update',
  flags: z
    .object({
      id: flag.string(),
      name: flag.string().optional(),
      stage: flag.string().optional(),
      amount: flag.number({ min: 0 }).optional(),
      close_date: flag.string().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    const changes: DealFields = {};
    if (flags.name !== undefined) changes.name = flags.name;
    if (flags.stage !== undefined) changes.stage = flags.stage;
    if (flags.amount !== undefined) changes.amount = flags.amount;
    if (flags.close_date !== undefined) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(flags.close_date) || Number.isNaN(Date.parse(flags.close_date))) {
        return fail(`--close-date: "${flags.close_date}" is not a date (YYYY-MM-DD).`);
      }
      changes.closeDate = new Date(`${flags.close_date}T00:00:00Z`);
    }
    if (Object.keys(changes).length === 0)
      return fail('Nothing to change: give --name, --stage, --amount or --close-date.');
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const deal = await crm.updateDeal(flags.id, changes, ctx.signal);
      if (!deal) return fail(`No deal with id ${flags.id} in ${crm.name}. Find ids with crm.deals_search.`);
      return ok(`Updated in ${crm.name}: ${dealLine(deal)}`, {
        sideEffects: [`crm deal ${deal.id} updated`],
        metadata: { id: deal.id },
        receipt: `${deal.name} (${deal.id})`,
      });
    });
  },
});

export const addNoteHandler = defineHandler({
  name: 'crm.note_add',
  flags: z
    .object({
      contact: flag.string().optional(),
      deal: flag.string().optional(),
      body: flag.string(),
    })
    .strict(),
  async execute(flags, ctx) {
    if ((flags.contact === undefined) === (flags.deal === undefined))
      return fail('Give exactly one of --contact ID or --deal ID.');
    const target =
      flags.contact !== undefined
        ? { kind: 'contact' as const, id: flags.contact }
        : { kind: 'deal' as const, id: flags.deal! };
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const note = await crm.addNote(target, flags.body, ctx.signal);
      if (!note)
        return fail(
          `No ${target.kind} with id ${target.id} in ${crm.name}. Find ids with crm.${target.kind === 'contact' ? 'contacts' : 'deals'}_search.`,
        );
      return ok(`Added note [${note.id}] to ${target.kind} ${target.id} in ${crm.name}.`, {
        sideEffects: [`crm note ${note.id} added`],
        metadata: { id: note.id },
        receipt: `note ${note.id} on ${target.kind} ${target.id}`,
      });
    });
  },
});
