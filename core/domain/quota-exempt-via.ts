/** The `via` of an Intelligent Messaging attempt: its message took the quota once, whatever its attempts. */
export const VIA_IM_ATTEMPT = 'im_attempt';
/** The `via` of the one message an opted-out handset still gets: no application's send, so it takes no quota. */
export const VIA_OPT_OUT_CONFIRMATION = 'campaign_opt_out_response';
/** Messages of these `via` take nothing from their application's quota. */
export const QUOTA_EXEMPT_VIA: readonly string[] = [VIA_IM_ATTEMPT, VIA_OPT_OUT_CONFIRMATION];
