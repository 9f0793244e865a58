-- Tychora canonical corpus, schema 7: PDF documents (issue 12). Their units index a derived text
-- as DOCX units do (doc_extractions, doc_locators with pages and boxes).

INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('pdf', 'pdfjs', 'application/pdf',
   'PDF read by pdf.js: paragraphs and headings in reading order with their page and box; running headers, footers and page numbers kept as furniture');
