/** The i-th bench destination: a New Zealand mobile number, unique for i below 10,000,000. */
export const destination = (i: number): string => `+6421${String(i).padStart(7, '0')}`;
