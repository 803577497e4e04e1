import { Readable } from 'node:stream';
import { destination } from './destination';

const NAMES = ['Aroha', 'Mere', 'Tama', 'Wiremu', 'Hana', 'Nikau', 'Kiri', 'Rawiri', 'Ana', 'Manaia', 'Olivia', 'Jack', 'Isla', 'Noah', 'Charlotte', 'Leo'];

/** `{...head, "members":[...]}` as a stream, `count` members, never one string: generated as the socket asks for them. */
export function membersBody(head: Record<string, unknown>, count: number, progress: { generated: number }): Readable {
  const open = JSON.stringify(head).slice(0, -1) + (Object.keys(head).length > 0 ? ',' : '') + '"members":[';
  let i = 0;
  let started = false;
  return new Readable({
    highWaterMark: 256 * 1024,
    read() {
      if (i >= count) {
        this.push(null);
        return;
      }
      let text = started ? '' : open;
      started = true;
      const end = Math.min(count, i + 2000);
      for (; i < end; i++) text += `${i > 0 ? ',' : ''}{"destination":"${destination(i)}","param1":"${NAMES[i % NAMES.length]}"}`;
      progress.generated = i;
      if (i >= count) text += ']}';
      this.push(text);
    },
  });
}
