<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>QObject</name>
    <message>
        <location filename="../app/gui_main.cpp" line="36"/>
        <source>Hearth</source>
        <translation>Hearth</translation>
    </message>
    <message>
        <location filename="../app/gui_main.cpp" line="37"/>
        <source>The conversation database cannot be opened:
%1

Move it aside and start with an empty one? (The old file is kept, renamed.)</source>
        <translation>无法打开对话数据库：
%1

将其移到一旁并使用新的空数据库吗？（旧文件会被保留并重命名。）</translation>
    </message>
    <message>
        <location filename="../app/gui_main.cpp" line="56"/>
        <source>Local LLM chat with its own inference engine.</source>
        <translation>使用自有推理引擎的本地大模型聊天。</translation>
    </message>
    <message>
        <location filename="../app/gui_main.cpp" line="59"/>
        <source>GGUF model to load.</source>
        <translation>要加载的 GGUF 模型。</translation>
    </message>
    <message>
        <location filename="../app/gui_main.cpp" line="60"/>
        <source>Conversation database.</source>
        <translation>对话数据库。</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="52"/>
        <source>is a broken link</source>
        <translation>是一个失效的链接</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="56"/>
        <source>is not a folder</source>
        <translation>不是文件夹</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="61"/>
        <source>cannot be read: %1</source>
        <translation>无法读取：%1</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="93"/>
        <source>%1 is part of a split model whose first part, %2, is missing</source>
        <translation>%1 是分卷模型的一部分，但缺少其第一部分 %2</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="177"/>
        <source>cannot be read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="179"/>
        <source>is not an Ollama manifest (JSON)</source>
        <translation>不是 Ollama 清单（JSON）</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="185"/>
        <source>names a malformed digest</source>
        <translation>包含格式错误的摘要</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="189"/>
        <source>names a blob that is missing: %1</source>
        <translation>指向的数据块不存在：%1</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="190"/>
        <source>is not a GGUF file</source>
        <translation>不是 GGUF 文件</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="247"/>
        <source>cannot be read as LM Studio&apos;s settings (%1)</source>
        <translation>无法作为 LM Studio 的设置读取（%1）</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="255"/>
        <source>is the models folder chosen in LM Studio (%1), but it does not exist</source>
        <translation>是在 LM Studio 中选定的模型文件夹（%1），但它不存在</translation>
    </message>
    <message>
        <location filename="../app/models/model_sources.cpp" line="273"/>
        <source>Your folders</source>
        <translation>你的文件夹</translation>
    </message>
</context>
<context>
    <name>hearth::AttachmentController</name>
    <message>
        <source>Reading documents…</source>
        <translation>正在读取文档…</translation>
    </message>
    <message>
        <source>Not attached: %1</source>
        <translation>未附加：%1</translation>
    </message>
    <message>
        <source>%1 (whole, ~%2 tokens)</source>
        <translation>%1（全文，约 %2 个词元）</translation>
    </message>
    <message>
        <source>%1 (searched, ~%2 tokens in %3 passages)</source>
        <translation>%1（检索，约 %2 个词元，共 %3 段）</translation>
    </message>
    <message>
        <source>Documents: %1. Each message carries up to %2 tokens of them.</source>
        <translation>文档：%1。每条消息最多附带其中 %2 个词元。</translation>
    </message>
</context>
<context>
    <name>hearth::ChatStatus</name>
    <message>
        <source>%1 · remote server</source>
        <translation>%1 · 远程服务器</translation>
    </message>
    <message>
        <source>KV: none here (the remote server keeps it)</source>
        <translation>KV：本机没有（由远程服务器保存）</translation>
    </message>
    <message>
        <source>Remote reply on %1: no local KV to save</source>
        <translation>回复在 %1 上生成：本机没有要保存的 KV</translation>
    </message>
    <message>
        <source>context %1</source>
        <translation>上下文 %1</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp"/>
        <source>Details…</source>
        <translation>详细信息…</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s) so far</source>
        <translation>
            <numerusform>目前已生成 %n 个词元</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="39"/>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="41"/>
        <source>%1 · %2 (%3)</source>
        <translation>%1 · %2（%3）</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="54"/>
        <source>%1 tok/s · first token %2 ms</source>
        <translation>%1 词元/秒 · 首词元 %2 毫秒</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="65"/>
        <source>KV reused: %1 of %2 prompt tokens</source>
        <translation>KV 复用：%2 个提示词元中的 %1 个</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="69"/>
        <source>KV: computed in full</source>
        <translation>KV：全部重新计算</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="69"/>
        <source>KV: computed in full (%1)</source>
        <translation>KV：全部重新计算（%1）</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="74"/>
        <source>KV restored: %1 tokens (saved ~%2 s)</source>
        <translation>KV 已恢复：%1 个词元（节省约 %2 秒）</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="75"/>
        <source>KV restored: %1 tokens</source>
        <translation>KV 已恢复：%1 个词元</translation>
    </message>
    <message>
        <source>KV restored: %1 of %2 tokens</source>
        <translation type="vanished">KV 已恢复：%2 个词元中的 %1 个</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="79"/>
        <source>context %1 / %2</source>
        <translation>上下文 %1 / %2</translation>
    </message>
    <message>
        <location filename="../ui/chat_status.cpp" line="56"/>
        <source>spec: accepted %1 of %2 drafted</source>
        <translation>推测解码：草拟 %2 个，接受 %1 个</translation>
    </message>
</context>
<context>
    <name>hearth::Composer</name>
    <message>
        <source>Attach…</source>
        <translation>附加…</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>移除…</translation>
    </message>
    <message>
        <source>Remove an attached document from this conversation</source>
        <translation>从此对话中移除一个附加的文档</translation>
    </message>
    <message>
        <source>Attach documents (text, Markdown, source code, PDF)…</source>
        <translation>附加文档（文本、Markdown、源代码、PDF）…</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="14"/>
        <location filename="../ui/composer.cpp" line="78"/>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="15"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="15"/>
        <source>Cancel edit</source>
        <translation>取消编辑</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="20"/>
        <source>Message Hearth… (Enter sends, Shift+Enter adds a line)</source>
        <translation>给 Hearth 发消息…（Enter 发送，Shift+Enter 换行）</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="24"/>
        <source>Editing a message: Send keeps both versions as branches.</source>
        <translation>正在编辑消息：发送后两个版本都会作为分支保留。</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="78"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="79"/>
        <source>Stop the reply (Esc)</source>
        <translation>停止回复（Esc）</translation>
    </message>
    <message>
        <location filename="../ui/composer.cpp" line="79"/>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
</context>
<context>
    <name>hearth::ConversationController</name>
    <message>
        <location filename="../app/chat/conversation_controller.cpp" line="36"/>
        <source>The conversation database %1 was moved or deleted while Hearth was running, so nothing more can be saved to it (%2). Save a copy of everything written so far, and Hearth goes on with the copy.</source>
        <translation>对话数据库 %1 在 Hearth 运行期间被移动或删除，因此无法再向其中保存任何内容（%2）。请将目前写入的全部内容另存为副本，Hearth 将继续使用该副本。</translation>
    </message>
    <message>
        <location filename="../app/chat/conversation_controller.cpp" line="42"/>
        <source>Could not read or save the conversation (%1). Check that the disk has free space, then try again.</source>
        <translation>无法读取或保存对话（%1）。请检查磁盘是否有剩余空间，然后重试。</translation>
    </message>
    <message>
        <location filename="../app/chat/conversation_controller.cpp" line="61"/>
        <source>Could not save a copy to %1: %2</source>
        <translation>无法将副本保存到 %1：%2</translation>
    </message>
</context>
<context>
    <name>hearth::ConversationSidebar</name>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="19"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="24"/>
        <source>Search chats…</source>
        <translation>搜索对话…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="33"/>
        <source>Model…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="34"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="85"/>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="86"/>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="93"/>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="93"/>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="100"/>
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="101"/>
        <source>Delete “%1” and all its messages? This cannot be undone.</source>
        <translation>删除“%1”及其全部消息？此操作无法撤销。</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="104"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="93"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="95"/>
        <source>Export all…</source>
        <translation>全部导出…</translation>
    </message>
    <message>
        <location filename="../ui/conversation_sidebar.cpp" line="96"/>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
</context>
<context>
    <name>hearth::Documents</name>
    <message>
        <source>PDF text needs pdftotext, which is not installed (Debian and Ubuntu: sudo apt install poppler-utils)</source>
        <translation>读取 PDF 文本需要 pdftotext，但它未安装（Debian 和 Ubuntu：sudo apt install poppler-utils）</translation>
    </message>
    <message>
        <source>pdftotext did not start</source>
        <translation>pdftotext 未能启动</translation>
    </message>
    <message>
        <source>reading the PDF took more than a minute; it was stopped</source>
        <translation>读取该 PDF 超过一分钟，已停止</translation>
    </message>
    <message>
        <source>this PDF cannot be read (damaged, encrypted or not a PDF)</source>
        <translation>无法读取此 PDF（已损坏、已加密或不是 PDF）</translation>
    </message>
    <message>
        <source>the PDF&apos;s text is not valid UTF-8</source>
        <translation>该 PDF 的文本不是有效的 UTF-8</translation>
    </message>
    <message>
        <source>the file does not exist</source>
        <translation>文件不存在</translation>
    </message>
    <message>
        <source>not a file</source>
        <translation>不是文件</translation>
    </message>
    <message>
        <source>the file is larger than 32 MiB</source>
        <translation>文件大于 32 MiB</translation>
    </message>
    <message>
        <source>not a text file (binary data or an encoding other than UTF-8); attach text, Markdown, source code or PDF files</source>
        <translation>不是文本文件（二进制数据或非 UTF-8 编码）；请附加文本、Markdown、源代码或 PDF 文件</translation>
    </message>
    <message>
        <source>there is no text in it</source>
        <translation>其中没有文本</translation>
    </message>
</context>
<context>
    <name>hearth::DocumentsUi</name>
    <message>
        <source>Remove %1</source>
        <translation>移除 %1</translation>
    </message>
    <message>
        <source>Attach documents</source>
        <translation>附加文档</translation>
    </message>
    <message>
        <source>Documents (*.txt *.md *.markdown *.pdf *.c *.cc *.cpp *.h *.hpp *.py *.js *.ts *.java *.rs *.go *.json *.yaml *.yml *.toml *.xml *.html *.css *.sh *.sql *.csv *.log);;All files (*)</source>
        <translation>文档 (*.txt *.md *.markdown *.pdf *.c *.cc *.cpp *.h *.hpp *.py *.js *.ts *.java *.rs *.go *.json *.yaml *.yml *.toml *.xml *.html *.css *.sh *.sql *.csv *.log);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Sources of this reply</source>
        <translation>此回复的来源</translation>
    </message>
    <message>
        <source>%1, passage %2 (~%3 tokens)</source>
        <translation>%1，第 %2 段（约 %3 个词元）</translation>
    </message>
    <message>
        <source>%1, whole (~%2 tokens)</source>
        <translation>%1，全文（约 %2 个词元）</translation>
    </message>
</context>
<context>
    <name>hearth::EngineWorker</name>
    <message>
        <location filename="../app/engine_host/engine_host.cpp" line="75"/>
        <source>The model was changed before this reply finished.</source>
        <translation>回复完成前模型已被更换。</translation>
    </message>
    <message>
        <location filename="../app/engine_host/engine_host.cpp" line="91"/>
        <source>No model is loaded. Choose one with Model → Open.</source>
        <translation>尚未加载模型。请通过“模型 → 打开”选择一个。</translation>
    </message>
    <message>
        <location filename="../app/engine_host/engine_host.cpp" line="139"/>
        <source>The engine failed.</source>
        <translation>引擎出错。</translation>
    </message>
</context>
<context>
    <name>hearth::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp"/>
        <source>%1 (remote)</source>
        <translation>%1（远程）</translation>
    </message>
    <message>
        <source>no model chosen</source>
        <translation>未选择模型</translation>
    </message>
    <message>
        <source>%1 (remote) ▾</source>
        <translation>%1（远程）▾</translation>
    </message>
    <message>
        <source>Replies run on the server at %1</source>
        <translation>回复在 %1 的服务器上生成</translation>
    </message>
    <message>
        <source>No model loaded. Choose one with Model… (Ctrl+O).</source>
        <translation>未加载模型。请用“模型…”（Ctrl+O）选择一个。</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp"/>
        <source>loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>&amp;Hearth</source>
        <translation>&amp;Hearth</translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation>新建对话(&amp;N)</translation>
    </message>
    <message>
        <source>Choose &amp;model…</source>
        <translation>选择模型(&amp;M)…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="43"/>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="107"/>
        <source>Code copied</source>
        <translation>代码已复制</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="108"/>
        <source>Message copied</source>
        <translation>消息已复制</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/main_window.cpp" line="132"/>
        <source>This conversation is longer than the model&apos;s context window: the %n oldest message(s) are left out of what the model sees (they stay saved here).</source>
        <translation>
            <numerusform>此对话超出了模型的上下文窗口：最早的 %n 条消息未提供给模型（它们仍保存在这里）。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="141"/>
        <source>Hearth</source>
        <translation>Hearth</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="141"/>
        <source>%1 — Hearth</source>
        <translation>%1 — Hearth</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="32"/>
        <location filename="../ui/main_window_engine.cpp" line="40"/>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="32"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="34"/>
        <source>Loading model — Hearth</source>
        <translation>正在加载模型 — Hearth</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="53"/>
        <source>%1 ▾</source>
        <translation>%1 ▾</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="54"/>
        <source>%1 · %2 · %3 · context %4 · %5 chat format</source>
        <translation>%1 · %2 · %3 · 上下文 %4 · %5 对话格式</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="68"/>
        <source>Loading cancelled; %1 is still loaded.</source>
        <translation>已取消加载；%1 仍在使用中。</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="69"/>
        <source>Loading cancelled. Choose a model with Model… (Ctrl+O).</source>
        <translation>已取消加载。请通过“模型…”（Ctrl+O）选择模型。</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="72"/>
        <source>Cannot load the model</source>
        <translation>无法加载模型</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp" line="73"/>
        <source>Cannot load %1: %2

Choose another model with **Model…** (Ctrl+O).</source>
        <translation>无法加载 %1：%2

请通过 **模型…**（Ctrl+O）选择其他模型。</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="123"/>
        <source>Save a copy of the conversations</source>
        <translation>保存对话的副本</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="124"/>
        <source>Hearth conversations (*.sqlite);;All files (*)</source>
        <translation>Hearth 对话 (*.sqlite);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="126"/>
        <source>Conversations saved to %1; Hearth goes on with this copy.</source>
        <translation>对话已保存到 %1；Hearth 将继续使用此副本。</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp"/>
        <source>%1 (base model — not tuned for chat)</source>
        <translation>%1（基础模型——未针对对话调优）</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp"/>
        <source>%1 (base model) ▾</source>
        <translation>%1（基础模型）▾</translation>
    </message>
    <message>
        <location filename="../ui/main_window_engine.cpp"/>
        <source>A base model, not tuned for chat: it continues text rather than answering.</source>
        <translation>基础模型，未针对对话调优：它会续写文本，而不是回答问题。</translation>
    </message>
</context>
<context>
    <name>hearth::MemoryFit</name>
    <message>
        <source>too big for the GPU: on the CPU</source>
        <translation>显卡放不下：在 CPU 上运行</translation>
    </message>
    <message>
        <source>all %1 layers on the GPU</source>
        <translation>全部 %1 层在显卡上</translation>
    </message>
    <message>
        <source>%1 of %2 layers on the GPU</source>
        <translation>%2 层中的 %1 层在显卡上</translation>
    </message>
    <message>
        <location filename="../app/common/memory_fit.cpp" line="57"/>
        <source>fits</source>
        <translation>内存充足</translation>
    </message>
    <message>
        <location filename="../app/common/memory_fit.cpp" line="58"/>
        <source>tight</source>
        <translation>内存紧张</translation>
    </message>
    <message>
        <location filename="../app/common/memory_fit.cpp" line="59"/>
        <source>too big</source>
        <translation>内存不足</translation>
    </message>
    <message>
        <location filename="../app/common/memory_fit.cpp" line="62"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
</context>
<context>
    <name>hearth::MessageDelegate</name>
    <message>
        <location filename="../ui/message_delegate.cpp"/>
        <source>Details…</source>
        <translation>详细信息…</translation>
    </message>
    <message>
        <source>Sources (~%1 tokens):</source>
        <translation>来源（约 %1 个词元）：</translation>
    </message>
    <message>
        <source>%1 ¶%2</source>
        <translation>%1 第 %2 段</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="36"/>
        <source>Thinking…</source>
        <translation>思考中…</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="36"/>
        <source>Reasoning</source>
        <translation>推理过程</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="253"/>
        <source>Copy code</source>
        <translation>复制代码</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="505"/>
        <source>code</source>
        <translation>代码</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="265"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="267"/>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="268"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../ui/message_delegate.cpp" line="263"/>
        <source>Save a copy…</source>
        <translation>保存副本…</translation>
    </message>
</context>
<context>
    <name>hearth::MessageView</name>
    <message>
        <source>↓ Jump to latest</source>
        <translation>↓ 跳到最新</translation>
    </message>
    <message>
        <source>Scroll to the newest message and follow the reply</source>
        <translation>滚动到最新消息并跟随回复</translation>
    </message>
</context>
<context>
    <name>hearth::ModelPicker</name>
    <message>
        <source>GPU: %1 (%2 of its free %3)&lt;br&gt;</source>
        <translation>显卡：%1（占用其空闲的 %3 中的 %2）&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="26"/>
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="28"/>
        <source>Choose a model — Hearth</source>
        <translation>选择模型 — Hearth</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="37"/>
        <source>Open file…</source>
        <translation>打开文件…</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="42"/>
        <source>Models in %1</source>
        <translation>%1 中的模型</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="51"/>
        <source>Open a GGUF model</source>
        <translation>打开 GGUF 模型</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="51"/>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="57"/>
        <source>Choose a model file.</source>
        <translation>请选择一个模型文件。</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="65"/>
        <source>%1 — checking…</source>
        <translation>%1 — 检查中…</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="84"/>
        <source>not a usable GGUF file</source>
        <translation>不是可用的 GGUF 文件</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="85"/>
        <source>%1 · not supported</source>
        <translation>%1 · 不支持</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="104"/>
        <source>Checking %1…</source>
        <translation>正在检查 %1…</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="110"/>
        <source>This file cannot be used: %1</source>
        <translation>无法使用此文件：%1</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="115"/>
        <source>Hearth runs this model.</source>
        <translation>Hearth 可以运行此模型。</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="116"/>
        <source>&lt;b&gt;Hearth cannot run this model&lt;/b&gt; (%1).</source>
        <translation>&lt;b&gt;Hearth 无法运行此模型&lt;/b&gt;（%1）。</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="117"/>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="117"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="118"/>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;Family: %2 (%3)&lt;br&gt;Parameters: %4&lt;br&gt;Quantization: %5&lt;br&gt;Trained context: %6&lt;br&gt;Size: %7&lt;br&gt;Chat format: %8&lt;br&gt;</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;模型家族：%2（%3）&lt;br&gt;参数量：%4&lt;br&gt;量化：%5&lt;br&gt;训练上下文：%6&lt;br&gt;大小：%7&lt;br&gt;对话格式：%8&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="38"/>
        <source>Models on this computer</source>
        <translation>本机上的模型</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="39"/>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="43"/>
        <source>Add a folder of models</source>
        <translation>添加模型文件夹</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="86"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="148"/>
        <source>Opened files</source>
        <translation>已打开的文件</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="151"/>
        <source>No GGUF models found. Use Open file… or Add folder…</source>
        <translation>未找到 GGUF 模型。请使用“打开文件…”或“添加文件夹…”。</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="154"/>
        <source>%1: %2 %3</source>
        <translation>%1：%2 %3</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="155"/>
        <source>&lt;b&gt;Skipped&lt;/b&gt;&lt;br&gt;%1</source>
        <translation>&lt;b&gt;已跳过&lt;/b&gt;&lt;br&gt;%1</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="242"/>
        <source>%1 in %2 files</source>
        <translation>%1，共 %2 个文件</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="249"/>
        <source>Found in: %1 (%2)&lt;br&gt;</source>
        <translation>来源：%1（%2）&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="252"/>
        <source>Memory: %1 at %2 tokens of context (weights %3, KV %4, +10%)</source>
        <translation>内存：上下文为 %2 个词元时需要 %1（权重 %3，KV %4，另加 10%）</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp" line="257"/>
        <source> — &lt;b&gt;%1&lt;/b&gt;: %2 available now</source>
        <translation> — &lt;b&gt;%1&lt;/b&gt;：当前可用 %2</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp"/>
        <source>base model</source>
        <translation>基础模型</translation>
    </message>
    <message>
        <location filename="../ui/model_picker.cpp"/>
        <source>&lt;b&gt;Base model, not tuned for chat&lt;/b&gt;: it continues text rather than answering. For conversations, choose an instruct or chat version.&lt;br&gt;</source>
        <translation>&lt;b&gt;基础模型，未针对对话调优&lt;/b&gt;：它会续写文本，而不是回答问题。用于对话时，请选择经过指令或对话调优的版本。&lt;br&gt;</translation>
    </message>
</context>
<context>
    <name>hearth::ReplyController</name>
    <message>
        <location filename="../app/chat/reply_controller.cpp" line="147"/>
        <source>The reply stopped because the context window is full. Start a new conversation, or raise the context length in Settings → Engine.</source>
        <translation>回复已停止：上下文窗口已满。请开始新对话，或在“设置 → 引擎”中增大上下文长度。</translation>
    </message>
</context>
<context>
    <name>hearth::SettingsDialog</name>
    <message>
        <source>%1 must be between %2 and %3; %4 is outside that range.</source>
        <translation>%1 必须在 %2 到 %3 之间；%4 超出了这个范围。</translation>
    </message>
    <message>
        <source>A context of %1 tokens is too short for a conversation: use at least %2, or 0 for the model&apos;s own.</source>
        <translation>%1 个词元的上下文太短，无法进行对话：请至少使用 %2，或填 0 使用模型自身的长度。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Delete the chosen saved preset (built-in presets stay)</source>
        <translation>删除所选的已保存预设（内置预设会保留）</translation>
    </message>
    <message>
        <source>%1 · default %2</source>
        <translation>%1 · 默认 %2</translation>
    </message>
    <message>
        <source>Range: %1</source>
        <translation>范围：%1</translation>
    </message>
    <message>
        <source>%1 tokens, or 0 for the model&apos;s own</source>
        <translation>%1 个词元，或 0 表示使用模型自身的长度</translation>
    </message>
    <message>
        <source>%1 tokens (the model was trained for %2), or 0 for the model&apos;s own</source>
        <translation>%1 个词元（模型训练时的上下文为 %2），或 0 表示使用模型自身的长度</translation>
    </message>
    <message>
        <source>KV cache at %1 tokens: %2</source>
        <translation>%1 个词元的 KV 缓存：%2</translation>
    </message>
    <message>
        <source>(its sliding-window layers keep only their last %1 positions; every layer keeping every position would take %2)</source>
        <translation>（其滑动窗口层只保留最近 %1 个位置；若每一层都保留全部位置，则需要 %2）</translation>
    </message>
    <message>
        <source>KV cache: this type cannot hold this model&apos;s rows</source>
        <translation>KV 缓存：此类型无法存放该模型的行</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="69"/>
        <source>Settings — Hearth</source>
        <translation>设置 — Hearth</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="70"/>
        <source>Sampling</source>
        <translation>采样</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="71"/>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="72"/>
        <source>Engine and app</source>
        <translation>引擎与应用</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="74"/>
        <source>Reset to defaults</source>
        <translation>恢复默认</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="75"/>
        <source>Save as my defaults</source>
        <translation>保存为我的默认值</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="102"/>
        <source>Save as preset…</source>
        <translation>另存为预设…</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="106"/>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="119"/>
        <source>default %1</source>
        <translation>默认 %1</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="130"/>
        <source>One stop string per line</source>
        <translation>每行一个停止字符串</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="132"/>
        <source>Stop strings</source>
        <translation>停止字符串</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="133"/>
        <source>Reason before answering</source>
        <translation>先推理再回答</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="135"/>
        <source>Thinking</source>
        <translation>思考</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="138"/>
        <source>Sampling changes apply to the next reply of this conversation.</source>
        <translation>采样设置将用于本对话的下一条回复。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="149"/>
        <source>Empty: the model&apos;s own default system prompt, if it has one.</source>
        <translation>留空：使用模型自带的默认系统提示词（如有）。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="150"/>
        <source>The system prompt always stays in what the model sees, even when old turns are left out.</source>
        <translation>即使较早的轮次被省略，系统提示词也始终保留在模型的输入中。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="163"/>
        <source>automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="166"/>
        <source>the model&apos;s own</source>
        <translation>模型自身的值</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="169"/>
        <source> MB</source>
        <translation> MB</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="172"/>
        <source>Q8_0 (half the memory)</source>
        <translation>Q8_0（约一半内存）</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="174"/>
        <source>Best available</source>
        <translation>最佳可用</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="177"/>
        <source>%1 — unavailable</source>
        <translation>%1 — 不可用</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="180"/>
        <source>%1 is unavailable: %2</source>
        <translation>%1 不可用：%2</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="186"/>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="187"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="187"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="187"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="190"/>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="191"/>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="192"/>
        <source>KV cache type</source>
        <translation>KV 缓存类型</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="193"/>
        <source>Backend</source>
        <translation>计算后端</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="195"/>
        <source>KV disk budget</source>
        <translation>KV 磁盘配额</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="197"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="198"/>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="254"/>
        <source>Threads, context length, KV type and backend apply when the model reloads (on OK).</source>
        <translation>线程数、上下文长度、KV 类型和后端将在模型重新加载时生效（点击“确定”后）。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="255"/>
        <source>The language changes when Hearth restarts.</source>
        <translation>语言将在 Hearth 重启后更改。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="265"/>
        <source>This model always reasons before it answers: its chat template has no switch.</source>
        <translation>此模型总是先推理再回答：它的对话模板没有开关。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="266"/>
        <source>Off: the model answers at once, without reasoning first (faster, often less careful).</source>
        <translation>关闭：模型直接回答，不先推理（更快，但往往不够周密）。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="271"/>
        <source>Choose a preset…</source>
        <translation>选择预设…</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="285"/>
        <source>Save preset</source>
        <translation>保存预设</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="285"/>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="31"/>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="32"/>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="33"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="34"/>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="35"/>
        <source>Typical-p</source>
        <translation>Typical-p</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="36"/>
        <source>Repetition penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="37"/>
        <source>Presence penalty</source>
        <translation>存在惩罚</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="38"/>
        <source>Frequency penalty</source>
        <translation>频率惩罚</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="39"/>
        <source>Penalty window (tokens)</source>
        <translation>惩罚窗口（词元）</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="40"/>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="41"/>
        <source>Max new tokens</source>
        <translation>最大生成词元数</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="48"/>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="49"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="50"/>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="56"/>
        <source>Precise</source>
        <translation>精确</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="57"/>
        <source>Balanced</source>
        <translation>均衡</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="58"/>
        <source>Creative</source>
        <translation>创意</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="211"/>
        <source>Speculative decoding</source>
        <translation>推测解码</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="218"/>
        <source>N-gram lookup (no extra model)</source>
        <translation>N-gram 查找（无需额外模型）</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="416"/>
        <source>Default (this chat and your earlier chats)</source>
        <translation>默认（本次对话和你以前的对话）</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="418"/>
        <source>Your earlier conversations (history)</source>
        <translation>你以前的对话（历史）</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="219"/>
        <location filename="../ui/settings_dialog.cpp" line="229"/>
        <source>Draft model</source>
        <translation>草稿模型</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="220"/>
        <source>A small GGUF model with the same vocabulary</source>
        <translation>词表相同的小型 GGUF 模型</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="222"/>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="223"/>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="228"/>
        <source>Drafter</source>
        <translation>草拟方式</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="230"/>
        <source>Longest draft</source>
        <translation>最长草稿</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="231"/>
        <source>The same replies as without it when sampling is greedy; applies to the next reply.</source>
        <translation>贪心采样时，回复与不使用时完全相同；从下一条回复起生效。</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="247"/>
        <source>Choose a draft model</source>
        <translation>选择草稿模型</translation>
    </message>
    <message>
        <location filename="../ui/settings_dialog.cpp" line="248"/>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>hearth::TransferActions</name>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="47"/>
        <source>&amp;Export conversation…</source>
        <translation>导出对话(&amp;E)…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="48"/>
        <source>Export &amp;all conversations…</source>
        <translation>导出全部对话(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="49"/>
        <source>&amp;Import conversations…</source>
        <translation>导入对话(&amp;I)…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="92"/>
        <source>Markdown, the shown branch (*.md)</source>
        <translation>Markdown，当前显示的分支 (*.md)</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="93"/>
        <source>Hearth JSON, every branch and setting (*.json)</source>
        <translation>Hearth JSON，包含所有分支和设置 (*.json)</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="94"/>
        <source>Export conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="104"/>
        <source>Exporting the conversation…</source>
        <translation>正在导出对话…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="111"/>
        <source>Hearth conversations %1</source>
        <translation>Hearth 对话 %1</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="112"/>
        <source>Export all conversations</source>
        <translation>导出全部对话</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="115"/>
        <source>Exporting all conversations…</source>
        <translation>正在导出全部对话…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="121"/>
        <source>Import conversations</source>
        <translation>导入对话</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="122"/>
        <source>Conversation exports: Hearth, ChatGPT, Claude (*.json)</source>
        <translation>对话导出文件：Hearth、ChatGPT、Claude (*.json)</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="122"/>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="124"/>
        <source>Importing conversations…</source>
        <translation>正在导入对话…</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="131"/>
        <source>Could not read %1, so nothing was imported.</source>
        <translation>无法读取 %1，因此未导入任何内容。</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="133"/>
        <source>%1 is not a conversation export that Hearth can read, or it is damaged, so nothing was imported. Hearth imports its own JSON exports and the conversations.json files of ChatGPT and Claude exports.</source>
        <translation>%1 不是 Hearth 能读取的对话导出文件，或者文件已损坏，因此未导入任何内容。Hearth 可以导入它自己的 JSON 导出文件，以及 ChatGPT 和 Claude 导出中的 conversations.json 文件。</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="139"/>
        <source>The imported conversations could not be saved, so nothing was imported. Check that the disk has free space, then try again.</source>
        <translation>无法保存导入的对话，因此未导入任何内容。请检查磁盘是否有可用空间，然后重试。</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="141"/>
        <source>The conversations could not be read from the database, so nothing was exported.</source>
        <translation>无法从数据库读取对话，因此未导出任何内容。</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="143"/>
        <source>Could not write %1, so nothing was exported. Check that the folder exists, that you may write to it and that the disk has free space.</source>
        <translation>无法写入 %1，因此未导出任何内容。请检查文件夹是否存在、你是否有写入权限，以及磁盘是否有可用空间。</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="157"/>
        <source>Conversation exported to %1.</source>
        <translation>对话已导出到 %1。</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/transfer_actions.cpp" line="158"/>
        <source>%n conversation(s) exported to %1.</source>
        <translation>
            <numerusform>已将 %n 个对话导出到 %1。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/transfer_actions.cpp" line="160"/>
        <source>%n conversation(s) imported from %1 (%2 messages).</source>
        <translation>
            <numerusform>已从 %1 导入 %n 个对话（%2 条消息）。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="168"/>
        <source>Import failed</source>
        <translation>导入失败</translation>
    </message>
    <message>
        <location filename="../ui/transfer_actions.cpp" line="168"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
</context>
<context>
    <name>hearth::TurnPipeline</name>
    <message>
        <location filename="../app/chat/turn_pipeline.cpp" line="21"/>
        <source>another reply is running</source>
        <translation>另一条回复正在生成</translation>
    </message>
</context>
<context>
    <name>hearth::LocalServerController</name>
    <message>
        <source>The local server cannot listen on port %1: %2</source>
        <translation>本地服务器无法在端口 %1 上监听：%2</translation>
    </message>
</context>
<context>
    <name>hearth::RemoteController</name>
    <message>
        <source>No system keychain is available (%1), so the API key is not saved: it is used until Hearth quits. Start a keychain (GNOME Keyring, KWallet) to keep it.</source>
        <translation>没有可用的系统钥匙串（%1），因此 API 密钥未被保存：它只在 Hearth 退出前使用。启动一个钥匙串（GNOME Keyring、KWallet）即可保存它。</translation>
    </message>
    <message>
        <source>The keychain refused the API key (%1), so it is not saved: it is used until Hearth quits.</source>
        <translation>钥匙串拒绝了 API 密钥（%1），因此它未被保存：它只在 Hearth 退出前使用。</translation>
    </message>
</context>
<context>
    <name>hearth::RemoteEngine</name>
    <message>
        <source>%1 at %2</source>
        <translation>%2 上的 %1</translation>
    </message>
    <message>
        <source>“%1” is not a server address. Enter one like http://gpu-box:8000 in Settings → Servers.</source>
        <translation>“%1”不是服务器地址。请在“设置 → 服务器”中输入类似 http://gpu-box:8000 的地址。</translation>
    </message>
    <message>
        <source>No model of the remote server is chosen. Choose one in Settings → Servers.</source>
        <translation>尚未选择远程服务器的模型。请在“设置 → 服务器”中选择一个。</translation>
    </message>
    <message>
        <source>%1 sent nothing for %2 seconds, so the reply was stopped.</source>
        <translation>%1 已有 %2 秒没有发送任何内容，因此回复已停止。</translation>
    </message>
    <message>
        <source>%1 did not answer within %2 seconds.</source>
        <translation>%1 在 %2 秒内没有应答。</translation>
    </message>
    <message>
        <source>%1 refused the request (HTTP %2: %3). Check the API key in Settings → Servers.</source>
        <translation>%1 拒绝了请求（HTTP %2：%3）。请检查“设置 → 服务器”中的 API 密钥。</translation>
    </message>
    <message>
        <source>%1 answered with an error (HTTP %2: %3).</source>
        <translation>%1 返回了错误（HTTP %2：%3）。</translation>
    </message>
    <message>
        <source>%1 reported an error during the reply: %2</source>
        <translation>%1 在回复过程中报告了错误：%2</translation>
    </message>
    <message>
        <source>%1 ended the reply before it was complete.</source>
        <translation>%1 在回复完成前就结束了它。</translation>
    </message>
    <message>
        <source>Your message and the text so far are kept; Regenerate tries again.</source>
        <translation>你的消息和已生成的文字都已保留；点“重新生成”可再试一次。</translation>
    </message>
    <message>
        <source>Cannot reach %1: the connection was refused. Is the server running, and is the address right?</source>
        <translation>无法连接 %1：连接被拒绝。服务器在运行吗？地址正确吗？</translation>
    </message>
    <message>
        <source>Cannot reach %1: no host of that name was found.</source>
        <translation>无法连接 %1：找不到该名称的主机。</translation>
    </message>
    <message>
        <source>%1 closed the connection before the reply was complete.</source>
        <translation>%1 在回复完成前关闭了连接。</translation>
    </message>
    <message>
        <source>Cannot reach %1: the connection timed out.</source>
        <translation>无法连接 %1：连接超时。</translation>
    </message>
    <message>
        <source>Cannot reach %1: %2.</source>
        <translation>无法连接 %1：%2。</translation>
    </message>
    <message>
        <source>“%1” is not a server address. Enter one like http://gpu-box:8000.</source>
        <translation>“%1”不是服务器地址。请输入类似 http://gpu-box:8000 的地址。</translation>
    </message>
    <message>
        <source>%1 did not answer with a model list: is it an OpenAI-compatible server?</source>
        <translation>%1 没有返回模型列表：它是兼容 OpenAI 的服务器吗？</translation>
    </message>
</context>
<context>
    <name>hearth::ServersPage</name>
    <message>
        <source>Local server</source>
        <translation>本地服务器</translation>
    </message>
    <message>
        <source>Serve the loaded model to other programs (OpenAI-compatible API)</source>
        <translation>把已加载的模型提供给其他程序（兼容 OpenAI 的 API）</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>Only programs on this computer can connect (127.0.0.1). The server stops when switched off and when Hearth quits; the window&apos;s own replies go first.</source>
        <translation>只有本机上的程序可以连接（127.0.0.1）。关闭开关或退出 Hearth 时服务器停止；窗口自己的回复优先。</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Listening on %1
OpenAI clients: %1/v1</source>
        <translation>正在 %1 上监听
OpenAI 客户端：%1/v1</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>已关闭</translation>
    </message>
    <message>
        <source>Remote server</source>
        <translation>远程服务器</translation>
    </message>
    <message>
        <source>Run replies on a remote server instead of this computer</source>
        <translation>在远程服务器而不是本机上生成回复</translation>
    </message>
    <message>
        <source>http://gpu-box:8000 (vLLM, SGLang, llama.cpp&apos;s llama-server, Hearth)</source>
        <translation>http://gpu-box:8000（vLLM、SGLang、llama.cpp 的 llama-server、Hearth）</translation>
    </message>
    <message>
        <source>saved in the system keychain</source>
        <translation>已保存在系统钥匙串中</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>List models</source>
        <translation>列出模型</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>A reply fails when the server sends nothing for this long</source>
        <translation>服务器在这么长时间内没有发送任何内容时，回复失败</translation>
    </message>
    <message>
        <source>Conversations stay saved on this computer; the server keeps nothing of them and there is no local KV cache for its replies.</source>
        <translation>对话仍保存在本机；服务器不保留它们，其回复也没有本地 KV 缓存。</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Timeout</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>The server lists no models.</source>
        <translation>服务器没有列出任何模型。</translation>
    </message>
    <message>
        <source>Asking %1 for its models…</source>
        <translation>正在向 %1 询问模型列表…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) listed.</source>
        <translation>
            <numerusform>已列出 %n 个模型。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>hearth::FirstStartPage</name>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Welcome to Hearth</source>
        <translation>欢迎使用 Hearth</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Hearth answers with a language model: one file (GGUF, usually 100 MB to a few GB) that runs entirely on this computer. No model has been chosen yet. Pick one you already have, or download a GGUF file into one of these folders:</source>
        <translation>Hearth 通过语言模型来回答：模型是一个文件（GGUF 格式，通常为 100 MB 到数 GB），完全在这台电脑上运行。目前还没有选择模型。请选择一个已有的模型，或把 GGUF 文件下载到以下任一文件夹：</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Hearth finds the models of LM Studio, Ollama, GPT4All, Jan and the Hugging Face cache in place; nothing is copied.</source>
        <translation>Hearth 会在原处找到 LM Studio、Ollama、GPT4All、Jan 和 Hugging Face 缓存中的模型，不会复制任何文件。</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Choose a model…</source>
        <translation>选择模型…</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>hearth::WelcomePage</name>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Try one of these, or write your own below:</source>
        <translation>试试下面的问题，或在下方输入你自己的：</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Explain how a hash table works, with a short example in Python.</source>
        <translation>解释哈希表的工作原理，并附一个简短的 Python 示例。</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Write a friendly email asking to move tomorrow's meeting to Friday.</source>
        <translation>写一封友好的邮件，请求把明天的会议改到周五。</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Give me three ideas for a quick vegetarian dinner.</source>
        <translation>给我三个快手素食晚餐的点子。</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Hearth keeps your conversations, and the model's working memory of each (its KV cache), on this computer only, so a long chat continues at once when you reopen it.</source>
        <translation>Hearth 只在这台电脑上保存你的对话以及模型对每个对话的工作记忆（KV 缓存），因此重新打开长对话时可以立即继续。</translation>
    </message>
    <message>
        <location filename="../ui/start_pages.cpp"/>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
</context>
<context>
    <name>hearth::ErrorText</name>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>This file is incomplete — download it again.</source>
        <translation>这个文件不完整——请重新下载。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>The file cannot be read. Check that it is still there and that you may read it.</source>
        <translation>无法读取该文件。请确认文件仍然存在，并且你有读取权限。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>This file is not a model Hearth can read; it may be damaged.</source>
        <translation>这个文件不是 Hearth 能读取的模型，可能已经损坏。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Hearth does not support this model yet.</source>
        <translation>Hearth 暂不支持这个模型。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>A setting is outside what this model allows.</source>
        <translation>某项设置超出了这个模型允许的范围。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>There is not enough memory for this. Try a shorter context or a smaller model.</source>
        <translation>内存不足。请尝试更短的上下文或更小的模型。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>The GPU failed. Choose the CPU in the settings, or restart Hearth.</source>
        <translation>GPU 出错了。请在设置中改用 CPU，或重新启动 Hearth。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Saved state was made with another model file; the conversation was read again (%1 tokens)</source>
        <translation>保存的状态来自另一个模型文件；已重新读取对话（%1 个词元）</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Saved state was made with other model settings; the conversation was read again (%1 tokens)</source>
        <translation>保存的状态来自不同的模型设置；已重新读取对话（%1 个词元）</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Saved state was made on another processor (CPU or GPU); the conversation was read again (%1 tokens)</source>
        <translation>保存的状态来自另一种处理器（CPU 或 GPU）；已重新读取对话（%1 个词元）</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Saved state was made by another Hearth version; the conversation was read again (%1 tokens)</source>
        <translation>保存的状态来自另一个 Hearth 版本；已重新读取对话（%1 个词元）</translation>
    </message>
    <message>
        <location filename="../app/common/error_text.cpp"/>
        <source>Part of the saved state could not be used; the conversation was read again (%1 tokens)</source>
        <translation>部分保存的状态无法使用；已重新读取对话（%1 个词元）</translation>
    </message>
</context>
<context>
    <name>hearth::DetailsDialog</name>
    <message>
        <location filename="../ui/details_dialog.cpp"/>
        <source>Details — Hearth</source>
        <translation>详细信息 — Hearth</translation>
    </message>
    <message>
        <location filename="../ui/details_dialog.cpp"/>
        <source>Technical details (in English):</source>
        <translation>技术细节（英文）：</translation>
    </message>
</context>
<context>
    <name>hearth::BackendChoices</name>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>this build of Hearth was made without it</source>
        <translation>这个 Hearth 版本在构建时未包含它</translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>no NVIDIA driver is installed</source>
        <translation>未安装 NVIDIA 驱动程序</translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>no NVIDIA graphics card was found</source>
        <translation>未找到 NVIDIA 显卡</translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>the NVIDIA driver is too old for this build of Hearth: update it</source>
        <translation>NVIDIA 驱动程序对这个 Hearth 版本来说太旧：请更新驱动</translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>CUDA cannot start (%1)</source>
        <translation>CUDA 无法启动（%1）</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>CPU (AVX2, %n thread(s))</source>
        <translation>
            <numerusform>CPU（AVX2，%n 个线程）</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>CPU (AVX2)</source>
        <translation>CPU（AVX2）</translation>
    </message>
    <message>
        <location filename="../app/chat/backend_choices.cpp"/>
        <source>CPU (reference kernels, slow)</source>
        <translation>CPU（参考内核，较慢）</translation>
    </message>
</context>
<context>
    <name>hearth::ConversationListModel</name>
    <message>
        <location filename="../app/chat/conversation_list_model.cpp"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../app/chat/conversation_list_model.cpp"/>
        <source>in another branch</source>
        <translation>在另一个分支中</translation>
    </message>
</context>
</TS>
