// What chat-tuned vision models wrap around a description, per language: greetings and
// acknowledgements ("Sure!"), preambles ("Here is the alt text:"), labels ("Alt text:"), talk about
// themselves ("As an AI…"), closings ("I hope this helps!") and character counts ("(98 characters)").
// clean.ts `cleanAltText` strips them; this file is only the data, compiled once into regular
// expressions per language.
//
// Each entry is a regular-expression source (an alternation), matched case-insensitively at a word
// start; the words must end there too, except where the script does not separate words (see below).
// English phrases apply to every language as well: models often slip into English around an answer
// written in another language ("Sure! Here is the alt text: Ein Hund am Strand.").

type WrapperPhrases = {
  /** Interjections that answer the request; stripped only when punctuation or the line end follows ("Sure!", not "Sure-footed"). */
  acknowledgements: string
  /** Words that present what follows ("Here is"); a sentence or colon lead-in opening with them is a preamble if it also has an `about` word. */
  presenting: string
  /** Words that show a lead-in talks about the answer, not the image: "alt text", "description", "options", "I", "you". */
  about: string
  /** Labels stripped with their colon ("Alt text:", "Bildbeschreibung:", "Answer:"); a label with nothing after it leaves nothing. */
  labels: string
  /** Sentence starts in which the model talks about itself: the whole sentence (or colon lead-in) goes. */
  selfReferences: string
  /** Sentence starts that close the answer: they and everything after them go ("I hope this helps!", "Note:"). */
  closings: string
  /** The word for characters in a trailing count: "(98 characters)", "(98 Zeichen)", "（45文字）". */
  characters: string
  /** A preamble that announces several alternatives: then only the first list item is the answer. */
  alternatives: string
  /**
   * A verb that proposes rather than describes ("would be", "könnte lauten"): a short colon lead-in with
   * one and an `about` word is a preamble ("The alt text for this image would be: …"). Languages
   * without it use the English words only.
   */
  proposing?: string
}

/** Languages written without spaces between words: a phrase may start right after another word. */
const NO_WORD_START = new Set(['ja', 'zh'])
/** …and end right before one; Korean too, whose endings attach to the stem ("되셨으면"). */
const NO_WORD_END = new Set(['ja', 'zh', 'ko'])

const r = String.raw

const WRAPPER_PHRASES = {
  en: {
    acknowledgements: r`sure(?:\s+thing)?|certainly|of\s+course|absolutely|definitely|okay|ok|alright|all\s+right|no\s+problem|got\s+it|understood|gladly|here\s+you\s+go|here\s+it\s+is|hello(?:\s+there)?|hi(?:\s+there)?|hey(?:\s+there)?|great\s+question|happy\s+to\s+help|with\s+pleasure`,
    presenting: r`here\s+is|here['’]s|here\s+are|below\s+is|the\s+following\s+is|i['’]ve\s+(?:written|created|crafted|come\s+up\s+with)|i\s+have\s+(?:written|created|crafted)|i\s+(?:would\s+)?(?:suggest|propose|recommend)|i['’]d\s+(?:suggest|propose|recommend)|my\s+(?:suggestion|proposal)`,
    about: r`alt(?:ernative)?[\s-]*(?:text|tag)s?|alt|image\s+descriptions?|descriptions?|describ(?:e|ing)|captions?|summary|options?|versions?|suggestions?|i|i['’]m|i['’]ve|me|my|you|your`,
    labels: r`(?:wcag(?:[\s-]*2(?:\.\d)?)?[\s-]*(?:compliant|conformant|friendly)\s+)?(?:(?:suggested|proposed|recommended|concise|short|shorter|shortened|condensed|brief|final|generated|improved|revised|updated|detailed|your|the|my)\s+)?(?:alt(?:ernative)?[\s-]*(?:text|tag)|(?:shorter|shortened|condensed|revised)\s+version|alt|image\s+description|description|caption|answer|response|output|result|assistant|option\s*\d+|version\s*\d+)(?:\s+(?:for|of)\s+(?:the|this|your)\s+(?:image|picture|photo|photograph))?|short|concise|detailed|brief`,
    selfReferences: r`(?:however|but|instead|that\s+said),?\s+(?:i\s+can|here\s+is|here['’]s|i['’]ll|i\s+will|let\s+me)|as\s+an?\s+(?:ai|artificial\s+intelligence|language\s+model|large\s+language\s+model|text-based|vision|visual)|i['’]m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|unfortunately,?\s+i|i\s+(?:can\s*not|can['’]t|am\s+unable\s+to|['’]m\s+unable\s+to|am\s+not\s+able\s+to|['’]m\s+not\s+able\s+to|don['’]t|do\s+not|won['’]t)\s+(?:identify|recogni[sz]e|tell|determine|know|name|provide|help|speculate)|i['’]d\s+be\s+(?:happy|glad|delighted)|i\s+would\s+be\s+(?:happy|glad|delighted)|i['’]m\s+(?:happy|glad|delighted)\s+to|i\s+am\s+(?:happy|glad|delighted)\s+to|let\s+me\s+(?:describe|provide|write|create|give|help|take\s+a\s+look)|i['’]ll\s+(?:describe|provide|write|create|give|help)|i\s+will\s+(?:describe|provide|write|create|give|help)|what\s+an?\s+(?:lovely|beautiful|great|nice|wonderful|stunning|cute|interesting)\s+(?:image|photo|picture|shot)|thanks?\s+(?:you\s+)?for\s+(?:sharing|the|this|providing|uploading)`,
    closings: r`i\s+hope\s+(?:this|that|it)\s+(?:helps|is\s+helpful|works|fits|meets|suits|does|captures|was)|hope\s+(?:this|that|it)\s+helps|(?:please\s+)?let\s+me\s+know\s+(?:if|whether|how|what|should)|feel\s+free\s+to|don['’]t\s+hesitate|do\s+not\s+hesitate|is\s+there\s+anything\s+else|anything\s+else\s+(?:i\s+can|you)|if\s+you\s+(?:need|want|would\s+like|['’]d\s+like|have\s+any|require|prefer|wish)|would\s+you\s+like\s+(?:me|a|an|any|it)|do\s+you\s+want\s+(?:me|a|an|it)|shall\s+i|should\s+i|i\s+can\s+(?:also\s+)?(?:provide|adjust|make|give|write|shorten|create|tailor|tweak|expand|offer)|this\s+(?:alt(?:ernative)?[\s-]*text|description|caption|text\s+(?:is|has|uses|meets|stays|keeps))|(?:character|word)\s+count|(?:note|notes|explanation|rationale|why\s+this\s+works|key\s+(?:elements|details|choices|features)|alternatives?|other\s+options|considerations|reasoning)(?:\s+(?:of|for|behind)\s+[^:：\n]{1,30})?\s*[:：]`,
    characters: r`characters?|chars?|letters`,
    alternatives: r`options?|versions?|alternatives?|variations?|variants?|suggestions?|choices|ideas`,
    proposing: r`(?:would|could|might|may|should|can)\s+(?:be|read|go\s+like|look\s+like)|would\s+say`,
  },
  de: {
    acknowledgements: r`gerne|gern|sehr\s+gerne|aber\s+gerne|klar|na\s+klar|natürlich|sicher|selbstverständlich|okay|ok|alles\s+klar|hallo|verstanden|kein\s+problem|jawohl`,
    presenting: r`hier\s+ist|hier\s+sind|hier\s+kommt|hier\s+wäre|im\s+folgenden|folgend|nachfolgend|anbei|ich\s+schlage|mein\s+vorschlag`,
    about: r`alt[\s-]*text|alternativtext|alternativer\s+text|bildbeschreibung|beschreibung|bildunterschrift|vorschlag|vorschläge|optionen|varianten?|ich|mir|dich|dir|beschreiben`,
    labels: r`(?:(?:vorgeschlagener|vorgeschlagene|kurzer|kurze|möglicher|finaler)\s+)?(?:alt[\s-]*text|alternativtext|alternativer\s+text|bildbeschreibung|beschreibung|bildunterschrift|antwort|vorschlag|kürzere\s+(?:version|fassung)|variante\s*\d+|option\s*\d+)(?:\s+(?:für|zum|zu)\s+(?:das|dieses|dem|diesem)\s+(?:bild|foto))?`,
    selfReferences: r`als\s+(?:ki|künstliche\s+intelligenz|sprachmodell|ki-modell|ki-sprachmodell|ein\s+sprachmodell|ki-assistent)|es\s+tut\s+mir\s+leid|leider\s+kann\s+ich|ich\s+kann\s+(?:keine|nicht|die\s+person|personen)|ich\s+bin\s+nicht\s+in\s+der\s+lage|ich\s+helfe\s+(?:dir|ihnen)\s+gerne?|gerne\s+helfe\s+ich|ich\s+beschreibe|lass\s+mich|lassen\s+sie\s+mich|was\s+für\s+ein\s+(?:schönes|tolles|wunderbares)`,
    closings: r`ich\s+hoffe|hoffentlich|lass\s+(?:mich|es\s+mich)\s+wissen|lassen\s+sie\s+(?:mich|es\s+mich)\s+wissen|sag\s+(?:mir\s+)?bescheid|sagen\s+sie\s+(?:mir\s+)?bescheid|melde\s+dich|melden\s+sie\s+sich|wenn\s+(?:du|sie)\s+(?:möchtest|möchten|willst|wollen|brauchst|brauchen|eine|noch|weitere|änderungen)|falls\s+(?:du|sie)|möchtest\s+du|möchten\s+sie|brauchst\s+du|benötigen\s+sie|ich\s+kann\s+(?:den\s+text\s+)?(?:auch|gerne|gern)|dieser\s+(?:alt[\s-]*text|alternativtext|text\s+(?:ist|hat|enthält|erfüllt|bleibt))|diese\s+(?:beschreibung|bildbeschreibung)|(?:hinweis|anmerkung|erklärung|begründung|zeichenanzahl)\s*[:：]`,
    characters: r`zeichen|buchstaben`,
    alternatives: r`optionen|varianten|vorschläge|versionen|möglichkeiten|alternativen`,
    proposing: r`wäre|wären|könnte|könnten|würde|würden|sollte`,
  },
  fr: {
    acknowledgements: r`bien\s+sûr|certainement|certes|d['’]accord|absolument|parfait|très\s+bien|avec\s+plaisir|bonjour|pas\s+de\s+problème|voilà|entendu|ok|okay`,
    presenting: r`voici|voilà|ci-dessous|je\s+(?:vous\s+|te\s+)?propose|ma\s+proposition`,
    about: r`texte\s+alternatif|texte\s+alt|alt|descriptions?|légendes?|propositions?|suggestions?|options?|versions?|je|j(?=['’])|vous|te|décrire`,
    labels: r`(?:(?:proposition\s+de|suggestion\s+de)\s+)?(?:texte\s+alternatif|texte\s+alt|alt|description(?:\s+de\s+l['’]image)?|légende|réponse|version\s+(?:plus\s+)?courte|option\s*\d+|version\s*\d+)(?:\s+(?:pour|de)\s+(?:l['’]|cette\s+)(?:image|photo))?`,
    selfReferences: r`en\s+tant\s+qu['’](?:ia|intelligence\s+artificielle|assistant|modèle)|je\s+suis\s+désolée?|désolée?,?\s+(?:je|mais)|je\s+ne\s+peux\s+pas|je\s+ne\s+suis\s+pas\s+en\s+mesure|je\s+serais\s+(?:ravie?|heureux|heureuse)|je\s+vais\s+(?:décrire|vous|te)|laissez-moi|permettez-moi|quelle\s+(?:belle|jolie|magnifique)\s+(?:image|photo)`,
    closings: r`j['’]espère|n['’]hésitez\s+pas|n['’]hésite\s+pas|si\s+vous\s+(?:avez|souhaitez|voulez|désirez|préférez)|si\s+tu\s+(?:as|souhaites|veux|préfères)|dites-moi|dis-moi|faites-moi\s+savoir|fais-moi\s+savoir|souhaitez-vous|voulez-vous|je\s+peux\s+(?:aussi|également)|ce\s+texte\s+alternatif|cette\s+description|(?:remarque|note|explication|nombre\s+de\s+caractères)\s*[:：]`,
    characters: r`caractères|signes`,
    alternatives: r`options|versions|propositions|suggestions|variantes|alternatives`,
    proposing: r`serait|seraient|pourrait|pourraient|devrait|donnerait`,
  },
  es: {
    acknowledgements: r`claro(?:\s+que\s+sí)?|por\s+supuesto|desde\s+luego|de\s+acuerdo|perfecto|ciertamente|vale|con\s+gusto|hola|entendido|sin\s+problema`,
    presenting: r`aquí\s+(?:tienes|tiene|está|están|va|van|te\s+dejo|le\s+dejo)|a\s+continuación|te\s+propongo|le\s+propongo|este\s+es|esta\s+es|mi\s+propuesta`,
    about: r`texto\s+alternativo|texto\s+alt|alt|descripci[oó]n(?:es)?|leyendas?|pie\s+de\s+foto|propuestas?|sugerencias?|opci[oó]n(?:es)?|versi[oó]n(?:es)?|describir`,
    labels: r`(?:texto\s+alternativo|texto\s+alt|alt|descripci[oó]n(?:\s+de\s+la\s+imagen)?|leyenda|respuesta|propuesta|versi[oó]n\s+(?:más\s+)?corta|opci[oó]n\s*\d+)(?:\s+(?:para|de)\s+(?:la|esta)\s+(?:imagen|foto))?`,
    selfReferences: r`como\s+(?:una?\s+)?(?:ia|inteligencia\s+artificial|modelo|asistente)|lo\s+siento|lamentablemente|no\s+puedo|no\s+soy\s+capaz|me\s+encantaría|estaré\s+encantad[oa]|voy\s+a\s+describir|permíteme|déjame|qué\s+(?:bonita|linda|hermosa)\s+(?:imagen|foto)`,
    closings: r`espero\s+que|si\s+(?:necesitas|necesita|quieres|quiere|deseas|desea|prefieres|prefiere|tienes|tiene)|no\s+dudes|no\s+dude|avísame|avíseme|házmelo\s+saber|hágamelo\s+saber|dime\s+si|te\s+gustaría|le\s+gustaría|quieres\s+que|puedo\s+(?:también|ajustar|hacer|darte|acortar)|este\s+texto\s+alternativo|esta\s+descripción|(?:nota|explicación|número\s+de\s+caracteres)\s*[:：]`,
    characters: r`caracteres`,
    alternatives: r`opciones|versiones|alternativas|sugerencias|propuestas|variantes`,
    proposing: r`sería|serían|podría|podrían|debería`,
  },
  it: {
    acknowledgements: r`certo|certamente|sicuro|sicuramente|naturalmente|va\s+bene|d['’]accordo|perfetto|volentieri|ciao|assolutamente|senz['’]altro|ok|okay`,
    presenting: r`ecco|di\s+seguito|qui\s+(?:c['’]è|trovi|sotto)|ti\s+propongo|le\s+propongo|questo\s+è|la\s+mia\s+proposta`,
    about: r`testo\s+alternativo|testo\s+alt|alt|descrizion[ei]|didascali[ae]|propost[ae]|suggeriment[io]|opzion[ei]|version[ei]|ti|descrivere`,
    labels: r`(?:testo\s+alternativo|testo\s+alt|alt|descrizione(?:\s+dell['’]immagine)?|didascalia|risposta|proposta|versione\s+(?:più\s+)?breve|opzione\s*\d+)(?:\s+per\s+(?:l['’]|questa\s+)(?:immagine|foto))?`,
    selfReferences: r`come\s+(?:un['’]|una\s+|un\s+)?(?:ia|intelligenza\s+artificiale|modello|assistente)|mi\s+dispiace|purtroppo|non\s+posso|non\s+sono\s+in\s+grado|sarò\s+(?:felice|lieto|lieta)|sarei\s+(?:felice|lieto|lieta)|descriverò|lasciami|permettimi|che\s+(?:bella|bellissima)\s+(?:immagine|foto)`,
    closings: r`spero\s+che|fammi\s+sapere|mi\s+faccia\s+sapere|se\s+(?:hai|ha|vuoi|vuole|desideri|desidera|preferisci|ti\s+serve)|non\s+esitare|non\s+esiti|posso\s+(?:anche|modificarl|accorciarl|fornir)|vuoi\s+che|questo\s+testo\s+alternativo|questa\s+descrizione|(?:nota|spiegazione|numero\s+di\s+caratteri)\s*[:：]`,
    characters: r`caratteri`,
    alternatives: r`opzioni|versioni|alternative|proposte|suggerimenti|varianti`,
    proposing: r`sarebbe|sarebbero|potrebbe|potrebbero|dovrebbe`,
  },
  pt: {
    acknowledgements: r`claro|certamente|com\s+certeza|perfeito|sem\s+problemas?|olá|tudo\s+bem|está\s+bem|pois\s+não|entendido|com\s+prazer|ok|okay`,
    presenting: r`aqui\s+(?:está|estão|vai|vão|tem|tens)|segue|seguem|a\s+seguir|abaixo\s+está|eis|sugiro|proponho|minha\s+sugestão`,
    about: r`texto\s+alternativo|texto\s+alt|alt|descri[cç](?:[aã]o|ões)|legendas?|sugest(?:ão|ões)|op[cç](?:ão|ões)|vers(?:ão|ões)|você|voce|descrever`,
    labels: r`(?:texto\s+alternativo|texto\s+alt|alt|descri[cç][aã]o(?:\s+da\s+imagem)?|legenda|resposta|sugestão|versão\s+(?:mais\s+)?curta|opção\s*\d+)(?:\s+(?:para|da)\s+(?:a\s+|esta\s+)?(?:imagem|foto))?`,
    selfReferences: r`como\s+(?:uma?\s+)?(?:ia|inteligência\s+artificial|modelo|assistente)|desculpe|sinto\s+muito|lamento|infelizmente|não\s+(?:posso|consigo|sou\s+capaz)|ficarei\s+feliz|ficaria\s+feliz|vou\s+descrever|deixe-me|permita-me|que\s+(?:bela|linda|bonita)\s+(?:imagem|foto)`,
    closings: r`espero\s+que|se\s+(?:precisar|você\s+precisar|quiser|você\s+quiser|desejar|tiver|preferir)|fique\s+à\s+vontade|sinta-se\s+à\s+vontade|me\s+avise|avise-me|me\s+diga|diga-me|posso\s+(?:também|ajustar|fazer|criar|encurtar)|gostaria\s+(?:que|de)|este\s+texto\s+alternativo|esta\s+descrição|(?:nota|observação|explicação|contagem\s+de\s+caracteres)\s*[:：]`,
    characters: r`caracteres`,
    alternatives: r`opções|versões|alternativas|sugestões|variações`,
    proposing: r`seria|seriam|poderia|poderiam|deveria`,
  },
  nl: {
    acknowledgements: r`zeker|natuurlijk|tuurlijk|uiteraard|prima|oké|goed|graag|hallo|geen\s+probleem|begrepen|ok|okay`,
    presenting: r`hier\s+is|hier\s+zijn|hieronder|hierbij|ik\s+stel\s+voor|mijn\s+voorstel`,
    about: r`alt[\s-]*tekst|alternatieve\s+tekst|beschrijving|afbeeldingsbeschrijving|bijschrift|voorstel|suggesties?|opties?|versies?|ik|je|jij|u|beschrijven`,
    labels: r`(?:alt[\s-]*tekst|alternatieve\s+tekst|beschrijving|afbeeldingsbeschrijving|bijschrift|antwoord|voorstel|kortere\s+versie|optie\s*\d+)(?:\s+(?:voor|van)\s+(?:de|deze|het|dit)\s+(?:afbeelding|foto))?`,
    selfReferences: r`als\s+(?:een\s+)?(?:ai|taalmodel|ai-model|ai-assistent)|het\s+spijt\s+me|helaas|ik\s+kan\s+(?:geen|niet|de\s+persoon)|ik\s+ben\s+niet\s+in\s+staat|ik\s+help\s+(?:je|u)\s+graag|graag\s+help\s+ik|ik\s+beschrijf|wat\s+een\s+(?:mooie|prachtige|leuke)\s+(?:afbeelding|foto)`,
    closings: r`ik\s+hoop|hopelijk|laat\s+(?:het\s+)?(?:me|mij)\s+(?:gerust\s+)?weten|laat\s+het\s+weten|als\s+(?:je|u)\s+(?:nog|wilt|wil|meer|andere|iets|wijzigingen)|mocht\s+(?:je|u)|wil\s+je|wilt\s+u|ik\s+kan\s+(?:ook|de\s+tekst)|deze\s+(?:alt[\s-]*tekst|alternatieve\s+tekst|beschrijving)|(?:opmerking|noot|uitleg|toelichting|aantal\s+tekens)\s*[:：]`,
    characters: r`tekens|karakters`,
    alternatives: r`opties|versies|suggesties|varianten|alternatieven|voorstellen`,
    proposing: r`zou|zouden|kan\s+zijn|kunnen\s+zijn`,
  },
  pl: {
    acknowledgements: r`oczywiście|jasne|pewnie|dobrze|okej|świetnie|cześć|witaj|zrozumiano|z\s+przyjemnością|naturalnie|ok`,
    presenting: r`oto|poniżej|proponuję|tutaj\s+(?:jest|znajduje\s+się)|moja\s+propozycja`,
    about: r`tekst\s+alternatywny|tekstu\s+alternatywnego|tekst\s+alt|alt|opis|opisu|podpis|propozycj[aei]|wersj[aei]|opcj[aei]|opisać`,
    labels: r`(?:proponowany\s+)?(?:tekst\s+alternatywny|tekst\s+alt|alt|opis(?:\s+(?:obrazu|zdjęcia|obrazka))?|podpis|odpowiedź|propozycja|opcja\s*\d+)(?:\s+(?:dla|do)\s+(?:tego\s+)?(?:obrazu|zdjęcia|obrazka))?`,
    selfReferences: r`jako\s+(?:model|sztuczna\s+inteligencja|asystent|ai|si)|przepraszam|niestety|nie\s+mogę|nie\s+jestem\s+w\s+stanie|chętnie\s+(?:pomogę|opiszę)|opiszę|pozwól,?\s+że|co\s+za\s+(?:piękne|ładne)\s+zdjęcie`,
    closings: r`mam\s+nadzieję|daj\s+(?:mi\s+)?znać|proszę\s+(?:dać\s+)?(?:mi\s+)?znać|jeśli\s+(?:potrzebujesz|chcesz|masz|będziesz|wolisz|potrzeba)|jeżeli\s+(?:potrzebujesz|chcesz|masz|będziesz)|czy\s+(?:chcesz|potrzebujesz)|mogę\s+(?:też|również|także|skrócić|dostosować)|ten\s+(?:tekst\s+alternatywny|opis)|(?:uwaga|notatka|wyjaśnienie|liczba\s+znaków)\s*[:：]`,
    characters: r`znak(?:ów|i|a)?`,
    alternatives: r`opcje|wersje|propozycje|warianty|propozycji|opcji|wersji|wariantów`,
    proposing: r`byłby|byłaby|byłoby|mógłby|mogłaby|mogłoby|brzmiałby|brzmiałaby|brzmiałoby`,
  },
  sv: {
    acknowledgements: r`visst|absolut|självklart|javisst|okej|gärna|hej|inga\s+problem|toppen|såklart|givetvis|förstås|ok`,
    presenting: r`här\s+är|här\s+kommer|nedan\s+(?:är|följer)|jag\s+föreslår|mitt\s+förslag`,
    about: r`alt[\s-]*text(?:en)?|alternativ\s+text|alternativtext(?:en)?|bildbeskrivning(?:en)?|beskrivning(?:en)?|bildtext(?:en)?|förslag|alternativ|versioner?|jag|du|dig|beskriva`,
    labels: r`(?:föreslagen\s+)?(?:alt[\s-]*text|alternativ\s+text|alternativtext|bildbeskrivning|beskrivning|bildtext|svar|förslag|alternativ\s*\d+)(?:\s+(?:för|till|av)\s+(?:bilden|fotot))?`,
    selfReferences: r`som\s+(?:en\s+)?(?:ai|språkmodell|ai-modell|ai-assistent)|jag\s+är\s+ledsen|tyvärr|förlåt|jag\s+kan\s+(?:inte|tyvärr)|jag\s+hjälper\s+(?:dig\s+)?gärna|jag\s+beskriver|låt\s+mig\s+(?:beskriva|ge|skriva)|vilken\s+(?:fin|vacker)\s+bild`,
    closings: r`jag\s+hoppas|hoppas\s+(?:det|detta|att)|säg\s+till|låt\s+mig\s+veta|hör\s+av\s+dig|om\s+du\s+(?:vill|behöver|önskar|har|föredrar)|vill\s+du|behöver\s+du|jag\s+kan\s+(?:också|även|gärna)|den\s+här\s+(?:alt[\s-]*texten|beskrivningen)|denna\s+(?:alt[\s-]*text|beskrivning)|(?:obs|notera|förklaring|anmärkning|antal\s+tecken)\s*[:：]`,
    characters: r`tecken`,
    alternatives: r`alternativ|versioner|förslag|varianter`,
    proposing: r`skulle|kunde|kan\s+vara`,
  },
  da: {
    acknowledgements: r`selvfølgelig|klart|sikkert|absolut|okay|gerne|hej|intet\s+problem|naturligvis|helt\s+sikkert|fint|ok`,
    presenting: r`her\s+er|herunder|nedenfor\s+(?:er|følger)|jeg\s+foreslår|mit\s+forslag`,
    about: r`alt[\s-]*tekst(?:en)?|alternativ\s+tekst|alternative\s+tekst(?:en)?|billedbeskrivelse(?:n)?|beskrivelse(?:n)?|billedtekst(?:en)?|forslag|muligheder|versioner?|jeg|du|dig|beskrive`,
    labels: r`(?:foreslået\s+)?(?:alt[\s-]*tekst|alternativ\s+tekst|billedbeskrivelse|beskrivelse|billedtekst|svar|forslag|mulighed\s*\d+)(?:\s+(?:til|for|af)\s+(?:billedet|fotoet))?`,
    selfReferences: r`som\s+(?:en\s+)?(?:ai|sprogmodel|ai-model|ai-assistent)|jeg\s+beklager|desværre|undskyld|jeg\s+kan\s+ikke|jeg\s+hjælper\s+(?:dig\s+)?gerne|jeg\s+vil\s+(?:gerne\s+)?(?:beskrive|hjælpe)|lad\s+mig\s+(?:beskrive|give|skrive)|sikke\s+et\s+(?:flot|smukt)\s+billede`,
    closings: r`jeg\s+håber|håber\s+(?:det|dette|at)|sig\s+til|lad\s+mig\s+vide|giv\s+(?:mig\s+)?besked|hvis\s+du\s+(?:vil|har|ønsker|foretrækker|skal|mangler)|vil\s+du|ønsker\s+du|jeg\s+kan\s+(?:også|gerne)|denne\s+(?:alt[\s-]*tekst|beskrivelse)|(?:bemærk|note|forklaring|antal\s+tegn)\s*[:：]`,
    characters: r`tegn`,
    alternatives: r`muligheder|versioner|forslag|alternativer|varianter`,
    proposing: r`ville|kunne|kan\s+være`,
  },
  nb: {
    acknowledgements: r`selvfølgelig|klart|absolutt|okei|okay|gjerne|hei|ikke\s+noe\s+problem|naturligvis|sikkert|helt\s+klart|greit|ok`,
    presenting: r`her\s+er|nedenfor\s+(?:er|følger)|jeg\s+foreslår|mitt\s+forslag`,
    about: r`alt[\s-]*tekst(?:en)?|alternativ\s+tekst|alternative\s+tekst(?:en)?|bildebeskrivelse(?:n)?|beskrivelse(?:n)?|bildetekst(?:en)?|forslag|alternativer|versjon(?:er)?|jeg|du|deg|beskrive`,
    labels: r`(?:foreslått\s+)?(?:alt[\s-]*tekst|alternativ\s+tekst|bildebeskrivelse|beskrivelse|bildetekst|svar|forslag|alternativ\s*\d+)(?:\s+(?:til|for|av)\s+(?:bildet|fotoet))?`,
    selfReferences: r`som\s+(?:en\s+)?(?:ki|ai|språkmodell|ki-modell|ai-modell|ki-assistent)|jeg\s+beklager|dessverre|beklager|unnskyld|jeg\s+kan\s+ikke|jeg\s+hjelper\s+(?:deg\s+)?gjerne|jeg\s+vil\s+(?:gjerne\s+)?(?:beskrive|hjelpe)|la\s+meg\s+(?:beskrive|gi|skrive)`,
    closings: r`jeg\s+håper|håper\s+(?:det|dette|at)|si\s+(?:i)?fra|gi\s+(?:meg\s+)?beskjed|hvis\s+du\s+(?:vil|trenger|har|ønsker|foretrekker)|vil\s+du|ønsker\s+du|trenger\s+du|jeg\s+kan\s+(?:også|gjerne)|denne\s+(?:alt[\s-]*teksten|beskrivelsen|alternative\s+teksten)|(?:merk|merknad|forklaring|antall\s+tegn)\s*[:：]`,
    characters: r`tegn`,
    alternatives: r`alternativer|versjoner|forslag|varianter`,
    proposing: r`ville|kunne|kan\s+være`,
  },
  fi: {
    acknowledgements: r`toki|totta\s+kai|selvä(?:\s+juttu)?|tietysti|tietenkin|ilman\s+muuta|okei|hei|hienoa|mielelläni|sopii|ok`,
    presenting: r`tässä|alla|ehdotan|ohessa|seuraavassa|ehdotukseni`,
    about: r`vaihtoehtoi\p{L}*\s+tekst\p{L}*|alt[\s-]*tekst\p{L}*|kuvau\p{L}*|kuvaus|kuvateksti\p{L}*|ehdotu\p{L}*|vaihtoeh\p{L}*|versi\p{L}*|sinulle|teille|kuvail\p{L}*`,
    labels: r`(?:ehdotettu\s+)?(?:vaihtoehtoinen\s+teksti|alt[\s-]*teksti|kuvaus|kuvateksti|vastaus|ehdotus|vaihtoehto\s*\d+)(?:\s+kuvalle)?`,
    selfReferences: r`tekoälynä|kielimallina|tekoälymallina|tekoälyavustajana|valitettavasti|olen\s+pahoillani|pahoittelen|en\s+(?:voi|pysty)|autan\s+mielelläni|kuvailen`,
    closings: r`toivottavasti|toivon|kerro(?:\s+(?:jos|minulle|vain))?|jos\s+(?:tarvitset|haluat|tarvitsette|haluatte|sinulla|teillä)|haluatko|tarvitsetko|voin\s+(?:myös|tarvittaessa|lyhentää|muokata)|tämä\s+(?:vaihtoehtoinen\s+teksti|alt[\s-]*teksti|kuvaus)|(?:huomautus|huom|selitys|merkkimäärä)\s*[:：]`,
    characters: r`merkki\p{L}*`,
    alternatives: r`vaihtoeh\p{L}*|versi\p{L}*|ehdotu\p{L}*`,
  },
  cs: {
    acknowledgements: r`jistě|samozřejmě|určitě|dobře|rozumím|ahoj|dobrý\s+den|není\s+problém|s\s+radostí|klidně|jasně|ok|okay`,
    presenting: r`zde\s+(?:je|jsou|máte)|tady\s+(?:je|jsou|máte)|níže\s+(?:je|najdete|uvádím)|navrhuji|můj\s+návrh`,
    about: r`alternativní\s+text|alt[\s-]*text|popis(?:ek|ku|u)?|návrhy?|možnosti?|verze|vám|ti|popsat`,
    labels: r`(?:navrhovaný\s+)?(?:alternativní\s+text|alt[\s-]*text|popis(?:\s+obrázku)?|popisek|odpověď|návrh|možnost\s*\d+)(?:\s+(?:k|pro)\s+(?:tomuto\s+|tento\s+)?(?:obrázku|obrázek|fotografii|fotografie))?`,
    selfReferences: r`jako\s+(?:jazykový\s+model|umělá\s+inteligence|ai|asistent)|omlouvám\s+se|bohužel|nemohu|nejsem\s+schopen|nejsem\s+schopna|rád\s+(?:vám\s+|ti\s+)?pomohu|ráda\s+(?:vám\s+|ti\s+)?pomohu|popíšu|dovolte\s+mi|jaký\s+(?:krásný|pěkný)\s+obrázek`,
    closings: r`doufám|dejte\s+(?:mi\s+)?vědět|dej\s+(?:mi\s+)?vědět|pokud\s+(?:potřebujete|chcete|byste|budete|máte|potřebuješ|chceš)|jestli\s+(?:potřebujete|chcete|potřebuješ|chceš)|chcete|mohu\s+(?:také|i|text)|tento\s+(?:alternativní\s+text|popis)|(?:poznámka|vysvětlení|počet\s+znaků)\s*[:：]`,
    characters: r`znak\p{L}*`,
    alternatives: r`možnosti|verze|návrhy|varianty`,
  },
  ru: {
    acknowledgements: r`конечно|разумеется|хорошо|безусловно|отлично|ладно|да|понял|поняла|понятно|с\s+удовольствием|без\s+проблем|здравствуйте|привет|ок`,
    presenting: r`вот|ниже|предлагаю|мой\s+вариант`,
    about: r`альтернативн\p{L}*\s+текст\p{L}*|alt[\s-]*текст\p{L}*|alt|описани\p{L}*|подпис\p{L}*|вариант\p{L}*|верси\p{L}*|предложени\p{L}*|вам|тебе|я|описать`,
    labels: r`(?:предлагаемый\s+)?(?:альтернативный\s+текст|alt[\s-]*текст|alt|описание(?:\s+изображения)?|подпись|ответ|вариант\s*\d+)(?:\s+(?:для|к)\s+(?:этого\s+|этому\s+)?(?:изображения|изображению|фото|фотографии))?`,
    selfReferences: r`как\s+(?:языковая\s+модель|ии|искусственный\s+интеллект|модель|ассистент)|извините|к\s+сожалению|прошу\s+прощения|я\s+не\s+могу|я\s+не\s+в\s+состоянии|с\s+радостью|буду\s+рад[аы]?|я\s+опишу|позвольте|какое\s+(?:красивое|прекрасное)\s+(?:изображение|фото)`,
    closings: r`надеюсь|если\s+(?:нужно|нужна|нужен|нужны|вам|потребуется|хотите|захотите|понадобится|у\s+вас)|дайте\s+(?:мне\s+)?знать|сообщите|обращайтесь|хотите|могу\s+(?:также|ещё|еще|сократить|изменить)|этот\s+альтернативный\s+текст|это\s+описание|данное\s+описание|(?:примечание|пояснение|количество\s+символов)\s*[:：]`,
    characters: r`символ\p{L}*|знак\p{L}*`,
    alternatives: r`вариант\p{L}*|верси\p{L}*`,
    proposing: r`был[аио]?\s+бы|мог(?:ла|ло)?\s+бы|звучал[аио]?\s+бы`,
  },
  uk: {
    acknowledgements: r`звичайно|звісно|гаразд|добре|безумовно|чудово|так|зрозуміло|із\s+задоволенням|з\s+радістю|вітаю|привіт|авжеж|ок`,
    presenting: r`ось|нижче|пропоную|мій\s+варіант`,
    about: r`альтернативн\p{L}*\s+текст\p{L}*|alt[\s-]*текст\p{L}*|alt|опис\p{L}*|підпис\p{L}*|варіант\p{L}*|версі\p{L}*|пропозиці\p{L}*|вам|тобі|описати`,
    labels: r`(?:пропонований\s+)?(?:альтернативний\s+текст|alt[\s-]*текст|alt|опис(?:\s+зображення)?|підпис|відповідь|варіант\s*\d+)(?:\s+(?:для|до)\s+(?:цього\s+)?(?:зображення|фото|світлини))?`,
    selfReferences: r`як\s+(?:мовна\s+модель|ші|штучний\s+інтелект|модель|асистент)|вибачте|на\s+жаль|перепрошую|я\s+не\s+можу|я\s+не\s+в\s+змозі|із\s+задоволенням|з\s+радістю|я\s+опишу|дозвольте|яке\s+(?:гарне|чудове)\s+(?:зображення|фото)`,
    closings: r`сподіваюся|сподіваюсь|якщо\s+(?:потрібно|потрібна|потрібен|потрібні|вам|знадобиться|хочете|бажаєте|у\s+вас)|дайте\s+(?:мені\s+)?знати|повідомте|звертайтеся|звертайтесь|хочете|можу\s+(?:також|ще|скоротити|змінити)|цей\s+альтернативний\s+текст|цей\s+опис|(?:примітка|пояснення|кількість\s+символів)\s*[:：]`,
    characters: r`символ\p{L}*|знак\p{L}*`,
    alternatives: r`варіант\p{L}*|версі\p{L}*`,
  },
  tr: {
    // Turkish dotted capital İ does not fold to i in JavaScript's case-insensitive matching: [iİ] says both.
    acknowledgements: r`tabii(?:\s+ki)?|tabi(?:\s+ki)?|elbette|kesinlikle|memnuniyetle|tamam|peki|olur|merhaba|anlaşıldı|harika|sorun\s+değil`,
    presenting: r`[iİ]şte|aşağıda|aşağıdaki|önerim|önerilen`,
    about: r`alternatif\s+metin\p{L}*|alt[\s-]*metin\p{L}*|alt|açıklama\p{L}*|başlık|öneri\p{L}*|seçenek\p{L}*|versiyon\p{L}*|sürüm\p{L}*|size|sana|betimle\p{L}*`,
    labels: r`(?:önerilen\s+)?(?:alternatif\s+metin|alt[\s-]*metin|alt|görsel\s+açıklaması|resim\s+açıklaması|açıklama|başlık|yanıt|cevap|seçenek\s*\d+)`,
    selfReferences: r`bir\s+(?:yapay\s+zeka|dil\s+modeli)\s+olarak|yapay\s+zeka\s+olarak|üzgünüm|maalesef|ne\s+yazık\s+ki|özür\s+dilerim|yardımcı\s+olmaktan\s+mutluluk|betimleyeyim|açıklayayım`,
    closings: r`umarım|başka\s+bir\s+(?:şey|yardım|konuda)|yardımcı\s+olabileceğim|ihtiyacınız\s+olursa|ihtiyacın\s+olursa|eğer\s+(?:farklı|başka|isterseniz|istersen)|isterseniz|istersen|bana\s+bildirin|bu\s+alternatif\s+metin|(?:not|karakter\s+sayısı)\s*[:：]`,
    characters: r`karakter\p{L}*`,
    alternatives: r`seçenek\p{L}*|alternatif\p{L}*|versiyon\p{L}*|öneri\p{L}*`,
  },
  ja: {
    acknowledgements: r`はい|もちろん(?:です)?|かしこまりました|承知(?:いた)?しました|了解(?:しました)?|わかりました|分かりました|喜んで|こんにちは`,
    presenting: r`以下[はがに]|こちら[はが]|次[はが]|ご提案`,
    about: r`代替テキスト|alt\s*テキスト|alt属性|説明文|説明|キャプション|案|候補|提案`,
    labels: r`(?:画像の)?(?:代替テキスト|alt\s*テキスト|alt|説明文|画像の説明|説明|キャプション|回答|答え)(?:案)?`,
    selfReferences: r`AI(?:アシスタント)?として|言語モデルとして|申し訳(?:ありません|ございません)|残念ながら|喜んでお手伝い|説明(?:いた)?します`,
    closings: r`お役に立て|ご参考に|参考になれば|他に(?:何か|ご)|何か(?:他に|ご)|ご不明|ご質問|必要に応じて|修正が必要|調整が必要|もっと短|より短|さらに短|この代替テキスト|この説明文|(?:注|補足|文字数)[:：]`,
    characters: r`文字`,
    alternatives: r`案|候補|パターン|バリエーション|オプション`,
  },
  zh: {
    acknowledgements: r`好的|当然(?:可以)?|没问题|明白了?|收到|您好|你好`,
    presenting: r`以下是|以下为|下面是|这是|这里是|我建议`,
    about: r`替代文本|替代文字|alt\s*文本|alt|描述|说明|图注|建议|版本|选项|方案`,
    labels: r`(?:图片的?|图像的?)?(?:替代文本|替代文字|alt\s*文本|alt|描述|说明|图注|回答|答案)`,
    selfReferences: r`作为(?:一个)?(?:AI|人工智能|语言模型|AI助手)|抱歉|对不起|很遗憾|我无法|我不能|很乐意|我很乐意|我来描述|让我(?:来)?描述`,
    closings: r`希望(?:这|以上|对)|如果(?:您|你)?(?:需要|想要|希望|有)|如需|如有|还有(?:什么|其他)|需要我|请告诉我|请随时|这个替代文本|此替代文本|该替代文本|这段描述|此描述|(?:注|备注|字数)[:：]`,
    characters: r`个?字(?:符)?`,
    alternatives: r`选项|版本|方案|候选`,
  },
  ko: {
    acknowledgements: r`네|물론(?:입니다|이죠)?|알겠습니다|좋습니다|그럼요|안녕하세요|기꺼이|당연하죠|넵`,
    presenting: r`다음은|아래는|여기\s*있습니다|제안(?:하는|드리는)`,
    about: r`대체\s*텍스트\p{L}*|alt\s*텍스트\p{L}*|alt|설명\p{L}*|캡션\p{L}*|제안\p{L}*|버전\p{L}*|옵션\p{L}*`,
    labels: r`(?:이미지\s*)?(?:대체\s*텍스트|alt\s*텍스트|alt|설명|캡션|답변|응답|옵션\s*\d+)`,
    selfReferences: r`AI(?:로서|\s*모델로서|\s*어시스턴트로서)|언어\s*모델로서|죄송합니다|죄송하지만|안타깝게도|유감스럽게도|기꺼이\s*도와|설명해\s*드리겠습니다|설명하겠습니다`,
    closings: r`도움이\s*되(?:셨|었|길|기를|면)|더\s*필요|다른\s*(?:버전|옵션|도움|요청)|수정이\s*필요|필요하시면|필요하면|궁금한|언제든지|알려\s*주세요|이\s*대체\s*텍스트|이\s*설명|(?:참고|메모|글자\s*수)\s*[:：]`,
    characters: r`자|글자|문자`,
    alternatives: r`옵션|버전|가지|제안`,
  },
  ar: {
    acknowledgements: r`بالتأكيد|بالطبع|طبعًا|طبعا|حسنًا|حسنا|أكيد|مرحبًا|مرحبا|بكل\s+سرور|لا\s+مشكلة|تمام|نعم`,
    presenting: r`إليك|إليكم|فيما\s+يلي|هذا\s+هو|هذه\s+هي|أقترح|ها\s+هو|ها\s+هي`,
    about: r`النص\s+البديل|نص\s+بديل|نصًا\s+بديلًا|وصف|الوصف|وصفًا|تعليق|اقتراح|خيار\p{L}*|نسخة|لك|لكم`,
    labels: r`(?:النص\s+البديل|نص\s+بديل|alt|الوصف|وصف\s+الصورة|التعليق|الإجابة|الجواب)(?:\s+(?:للصورة|لهذه\s+الصورة))?`,
    selfReferences: r`بصفتي|كنموذج|كذكاء\s+اصطناعي|عذرًا|عذرا|آسف|أعتذر|للأسف|لا\s+أستطيع|لا\s+يمكنني|يسعدني|سأصف|دعني`,
    closings: r`آمل|أتمنى|إذا\s+(?:كنت|كنتم|احتجت|أردت|رغبت)|إن\s+(?:كنت|احتجت|أردت)|لا\s+تتردد|أخبرني|أعلمني|هل\s+تريد|هل\s+ترغب|يمكنني\s+(?:أيضًا|أيضا|تعديل|تقصير)|هذا\s+النص\s+البديل|هذا\s+الوصف|(?:ملاحظة|شرح|عدد\s+الأحرف)\s*[:：]`,
    characters: r`حرف\p{L}*|أحرف|حروف`,
    alternatives: r`خيارات|نسخ|بدائل|اقتراحات`,
  },
  hi: {
    acknowledgements: r`ज़रूर|जरूर|बिल्कुल|बिलकुल|ठीक\s+है|अवश्य|हाँ|हां|नमस्ते|निश्चित\s+रूप\s+से`,
    presenting: r`यहाँ|यहां|नीचे|प्रस्तुत\s+है|मेरा\s+सुझाव`,
    about: r`वैकल्पिक\s+(?:पाठ|टेक्स्ट)|ऑल्ट\s+टेक्स्ट|alt|विवरण|वर्णन|कैप्शन|सुझाव|विकल्प|संस्करण|आपके`,
    labels: r`(?:वैकल्पिक\s+(?:पाठ|टेक्स्ट)|ऑल्ट\s+टेक्स्ट|alt|छवि\s+(?:का\s+)?विवरण|विवरण|वर्णन|कैप्शन|उत्तर|जवाब)`,
    selfReferences: r`एक\s+(?:एआई|AI|भाषा\s+मॉडल)\s+के\s+रूप\s+में|क्षमा\s+करें|माफ़\s+कीजिए|खेद\s+है|दुर्भाग्य\s+से|मुझे\s+(?:खुशी|ख़ुशी)\s+होगी|मैं\s+वर्णन\s+कर`,
    closings: r`मुझे\s+(?:आशा|उम्मीद)|उम्मीद\s+है|आशा\s+है|अगर\s+आप|यदि\s+आप|बताइए|बताएं|बताएँ|क्या\s+आप\s+चाहेंगे|यह\s+वैकल्पिक\s+(?:पाठ|टेक्स्ट)|यह\s+विवरण|(?:नोट|टिप्पणी|अक्षर\s+संख्या)\s*[:：]`,
    characters: r`अक्षर|वर्ण|कैरेक्टर`,
    alternatives: r`विकल्प|संस्करण|सुझाव`,
  },
} satisfies Record<string, WrapperPhrases>

/**
 * The languages whose wrapper phrases are known. Any other language is cleaned with the English
 * phrases only (plus the language-independent rules: template tokens, markdown, quotes, counts).
 */
export const WRAPPER_LANGUAGES: readonly string[] = Object.keys(WRAPPER_PHRASES)

export type WrapperRules = {
  /** "Sure!", "Certainly,", "はい、" at the start, with the punctuation after it. */
  acknowledgement: RegExp
  /** A lead-in that opens with a presenting word ("Here is …"). */
  presenting: RegExp
  /** Somewhere in a lead-in: a word about the answer or the conversation. */
  about: RegExp
  /** "Alt text:" at the start, with its colon. */
  label: RegExp
  /** A line that is only a label or heading: "**Alt text**", "Alt text:". */
  labelLine: RegExp
  /** A sentence that opens with the model talking about itself. */
  selfReference: RegExp
  /** A sentence that opens a closing. */
  closing: RegExp
  /** A trailing "(98 characters)". */
  characterCount: RegExp
  /** A preamble announcing alternatives. */
  alternatives: RegExp
  /** Somewhere in a lead-in: a verb that proposes ("would be"). */
  proposing: RegExp
}

const WORD_START = String.raw`(?<![\p{L}\p{M}\p{N}])`
const WORD_END = String.raw`(?![\p{L}\p{M}\p{N}])`

/** The language's phrases and the English ones, each with its own word boundaries. */
function either(language: keyof typeof WRAPPER_PHRASES, field: keyof WrapperPhrases, wordStart = false): string {
  const phrases = (lang: keyof typeof WRAPPER_PHRASES): string | undefined => (WRAPPER_PHRASES[lang] as WrapperPhrases)[field]
  const bounded = (lang: keyof typeof WRAPPER_PHRASES) =>
    `${wordStart && !NO_WORD_START.has(lang) ? WORD_START : ''}(?:${phrases(lang)})${NO_WORD_END.has(lang) ? '' : WORD_END}`
  const own = language !== 'en' && phrases(language) !== undefined
  return (own ? `(?:${bounded(language)}|${bounded('en')})` : bounded('en')).normalize('NFC')
}

function compile(language: keyof typeof WRAPPER_PHRASES): WrapperRules {
  const rx = (source: string) => new RegExp(source, 'iu')
  const phrase = (field: keyof WrapperPhrases, wordStart = false) => either(language, field, wordStart)
  const count = String.raw`[~≈]?\d{1,4}\s*${phrase('characters')}`
  return {
    acknowledgement: rx(String.raw`^[¡¿]?${phrase('acknowledgements')}(?:\s*[!,.…:：。！，、،]+|\s*$)\s*`),
    presenting: rx(`^${phrase('presenting')}`),
    about: rx(phrase('about', true)),
    label: rx(String.raw`^${phrase('labels')}(?:\s*\([^()]{0,40}\))?\s*[:：]\s*`),
    labelLine: rx(String.raw`^${phrase('labels')}(?:\s*\([^()]{0,40}\))?\s*[:：]?\s*$`),
    selfReference: rx(`^[¡¿]?${phrase('selfReferences')}`),
    closing: rx(String.raw`^[¡¿(（]?\s*${phrase('closings')}`),
    characterCount: rx(String.raw`(?:\s*[-–—]\s*|\s*)[([（]\s*[^()（）\d]{0,20}${count}[^()（）]{0,30}[)\]）]\s*[.。]?\s*$|\s+[-–—]\s*${count}\s*[.。]?\s*$`),
    alternatives: rx(phrase('alternatives', true)),
    proposing: rx(phrase('proposing', true)),
  }
}

const WRAPPER_RULES: ReadonlyMap<string, WrapperRules> = new Map(
  (Object.keys(WRAPPER_PHRASES) as Array<keyof typeof WRAPPER_PHRASES>).map((language) => [language, compile(language)]),
)

/** The compiled wrapper rules for a base language ("nb" for Norwegian, see count.ts `rulesLanguage`); English for any other. */
export function wrapperRulesFor(rulesLanguage: string): WrapperRules {
  return WRAPPER_RULES.get(rulesLanguage) ?? (WRAPPER_RULES.get('en') as WrapperRules)
}
