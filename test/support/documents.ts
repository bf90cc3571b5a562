import { crc32 } from 'node:zlib';

/** A one-page PDF whose lines are real text objects (what PDF text extraction reads). */
export function makePdf(lines: string[]): Buffer {
  const pdfString = (line: string) => line.replace(/([\\()])/g, '\\$1');
  const stream = `BT /F1 14 Tf 72 720 Td 18 TL ${lines.map((line) => `(${pdfString(line)}) Tj T*`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(Buffer.byteLength(pdf));
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf);
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A minimal Word document: one Heading 1 paragraph, then plain paragraphs. */
export function makeDocx(heading: string, paragraphs: string[]): Buffer {
  const w = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const paragraph = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${xmlEscape(text)}</w:t></w:r></w:p>`;
  const header = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
  return zip({
    '[Content_Types].xml': `${header}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
    '_rels/.rels': `${header}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/_rels/document.xml.rels': `${header}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
    'word/styles.xml': `${header}<w:styles xmlns:w="${w}"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
    'word/document.xml': `${header}<w:document xmlns:w="${w}"><w:body>${paragraph(heading, 'Heading1')}${paragraphs.map((text) => paragraph(text)).join('')}</w:body></w:document>`,
  });
}

/** A zip archive of stored (uncompressed) entries. */
export function zip(entries: Record<string, string | Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, value] of Object.entries(entries)) {
    const data = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
    const fileName = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(entries).length, 8);
  end.writeUInt16LE(Object.keys(entries).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A minimal Excel workbook: one sheet per entry, rows of cells (strings shared, numbers inline). */
export function makeXlsx(sheets: Record<string, Array<Array<string | number>>>): Buffer {
  const shared: string[] = [];
  const sharedIndex = (text: string) => {
    const found = shared.indexOf(text);
    return found >= 0 ? found : shared.push(text) - 1;
  };
  const names = Object.keys(sheets);
  const parts: Record<string, string> = {
    'xl/workbook.xml': `<workbook><sheets>${names.map((name, index) => `<sheet name="${xmlEscape(name)}" sheetId="${index + 1}"/>`).join('')}</sheets></workbook>`,
  };
  names.forEach((name, index) => {
    const rows = sheets[name]!.map(
      (row, rowIndex) =>
        `<row r="${rowIndex + 1}">${row
          .map((cell) =>
            typeof cell === 'number' ? `<c><v>${cell}</v></c>` : `<c t="s"><v>${sharedIndex(cell)}</v></c>`,
          )
          .join('')}</row>`,
    );
    parts[`xl/worksheets/sheet${index + 1}.xml`] =
      `<worksheet><sheetData>${rows.join('')}</sheetData></worksheet>`;
  });
  parts['xl/sharedStrings.xml'] =
    `<sst>${shared.map((text) => `<si><t>${xmlEscape(text)}</t></si>`).join('')}</sst>`;
  return zip(parts);
}

/** A minimal PowerPoint deck: each slide's first line is its title. */
export function makePptx(slides: string[][]): Buffer {
  const parts: Record<string, string> = {};
  slides.forEach((lines, index) => {
    parts[`ppt/slides/slide${index + 1}.xml`] =
      `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree>${lines
        .map(
          (line) => `<p:sp><p:txBody><a:p><a:r><a:t>${xmlEscape(line)}</a:t></a:r></a:p></p:txBody></p:sp>`,
        )
        .join('')}</p:spTree></p:cSld></p:sld>`;
  });
  return zip(parts);
}
