import type { Context } from 'koa';
import { VND } from './schemas';

/** The media type of a v1 answer, success or error: the vendor one when the client asked for it. */
export const answerType = (ctx: Context): string => (ctx.get('accept').includes(VND) ? VND : 'application/json');
